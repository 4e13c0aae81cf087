package s3

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// Stats lists the store's objects and reports their number and size
// ("objects", "bytes"), those of the file-record segments ("segments",
// "segment_bytes") and the number of jobs ("jobs").
func (s *Store) Stats(ctx context.Context) (map[string]int64, error) {
	st := map[string]int64{"objects": 0, "bytes": 0, "segments": 0, "segment_bytes": 0}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix)}
	for {
		start := s.local()
		out, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			s.observe(start, err, middleware.Metadata{})
			return nil, fmt.Errorf("measuring %s: %w", s.root, s.wrap("listing", "", err))
		}
		s.observe(start, nil, out.ResultMetadata)
		for _, o := range out.Contents {
			n := aws.ToInt64(o.Size)
			st["objects"]++
			st["bytes"] += n
			if k := aws.ToString(o.Key); len(k) > 4 && k[len(k)-4:] == ".seg" {
				st["segments"]++
				st["segment_bytes"] += n
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			break
		}
		in.ContinuationToken = out.NextContinuationToken
	}
	jobs, err := s.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	st["jobs"] = int64(len(jobs))
	return st, nil
}

// Jobs lists the jobs that have runs or bookmark versions, sorted.
func (s *Store) Jobs(ctx context.Context) ([]string, error) {
	dirs, err := s.listDirs(ctx, "jobs/")
	if err != nil {
		return nil, fmt.Errorf("listing jobs in %s: %w", s.root, err)
	}
	var jobs []string
	for _, d := range dirs {
		job, err := unesc(d)
		if err != nil {
			continue
		}
		h, _, err := s.readHead(ctx, job)
		if err != nil {
			return nil, fmt.Errorf("listing jobs in %s: %w", s.root, err)
		}
		if h.Seq > 0 || h.Version > 0 {
			jobs = append(jobs, job)
		}
	}
	slices.Sort(jobs)
	return jobs, nil
}
