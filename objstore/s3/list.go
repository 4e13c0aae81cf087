package s3

import (
	"context"
	"iter"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/objstore"
)

// List yields every object under prefix in ascending byte order of key (S3
// lists in UTF-8 binary order, which is Go's string order), one
// ListObjectsV2 page at a time. Keys with a segment starting with '_' or
// '.' are skipped unless prefix names that segment, and so are folder
// markers (keys ending in '/'). ModTime has S3's one-second resolution.
// The server's clock at the first response (its Date header) goes to the
// context's objstore.ListTrace.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[objstore.Object, error] {
	return s.ListAfter(ctx, prefix, "")
}

// ListAfter is List restricted to keys after startAfter (exclusive), sent
// to S3 as StartAfter: a prefix whose keys sort in arrival order can be
// listed from the last key already seen at the cost of the new keys only.
func (s *Store) ListAfter(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.Object, error] {
	return s.list(ctx, prefix, startAfter, nil)
}

// ListSkipping is List(ctx, "") without the folders below the root that
// hold an entry named marker, in one listing: objects are held back (by
// objstore.MarkFilter) until the listing has passed where their folders'
// marker would sort.
func (s *Store) ListSkipping(ctx context.Context, marker string, skipped func(string, objstore.Object)) iter.Seq2[objstore.Object, error] {
	return func(yield func(objstore.Object, error) bool) {
		m := &objstore.MarkFilter{Marker: marker, Skipped: skipped, MaxHeld: s.maxHeld,
			Probe: func(folder string) (bool, error) { return s.holds(ctx, folder, marker) }}
		for o, err := range s.list(ctx, "", "", m.See) {
			if err != nil {
				yield(o, err)
				return
			}
			m.Add(o)
			if !m.Release(yield) {
				return
			}
		}
		m.Flush(yield)
	}
}

var _ objstore.FolderSkipper = (*Store)(nil)

// defaultMaxHeld is how many objects ListSkipping holds back before it
// asks S3 whether the folders holding them back are marked.
const defaultMaxHeld = 10_000

// holds reports whether folder holds an entry named name, a file or a
// folder: one ListObjectsV2 with a delimiter, whose page names both.
func (s *Store) holds(ctx context.Context, folder, name string) (bool, error) {
	p := s.key(folder + "/" + name)
	out, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(p), Delimiter: aws.String("/")})
	if err != nil {
		return false, s.wrap("ListObjectsV2", p, err)
	}
	for _, cp := range out.CommonPrefixes {
		if aws.ToString(cp.Prefix) == p+"/" {
			return true, nil
		}
	}
	for _, o := range out.Contents {
		if aws.ToString(o.Key) == p {
			return true, nil
		}
	}
	return false, nil
}

// list is ListAfter that also passes every listed key under the store's
// prefix, hidden ones included, to see (when set) in key order, before the
// object of that key is yielded.
func (s *Store) list(ctx context.Context, prefix, startAfter string, see func(key string)) iter.Seq2[objstore.Object, error] {
	return func(yield func(objstore.Object, error) bool) {
		in := &s3.ListObjectsV2Input{
			Bucket:  aws.String(s.bucket),
			Prefix:  aws.String(s.key(prefix)),
			MaxKeys: aws.Int32(int32(s.cfg.ListPageSize)),
		}
		if startAfter != "" {
			in.StartAfter = aws.String(s.key(startAfter))
		}
		for first := true; ; first = false {
			out, err := s.client.ListObjectsV2(ctx, in)
			if err != nil {
				yield(objstore.Object{}, s.wrap("ListObjectsV2", s.key(prefix), err))
				return
			}
			if at, ok := awsmiddleware.GetServerTime(out.ResultMetadata); ok && first {
				// The clock of LastModified, for callers that compare with it.
				objstore.ReportServerTime(ctx, at)
			}
			last := ""
			for _, o := range out.Contents {
				full := aws.ToString(o.Key)
				last = full
				key, ok := strings.CutPrefix(full, s.prefix)
				if ok && see != nil {
					see(key)
				}
				if !ok || strings.HasSuffix(key, "/") || !visible(key, prefix) {
					continue
				}
				obj := objstore.Object{Key: key, Size: aws.ToInt64(o.Size), ModTime: modTime(o.LastModified), ETag: etag(o.ETag)}
				if !yield(obj, nil) {
					return
				}
			}
			if !aws.ToBool(out.IsTruncated) {
				return
			}
			// A page that ends inside a hidden folder: jump past the folder
			// instead of paging through it (a sink's _tidemark/ may hold
			// many files that List never yields).
			if dir, ok := hiddenDir(strings.TrimPrefix(last, s.prefix), prefix); ok {
				in.ContinuationToken = nil
				in.StartAfter = aws.String(s.prefix + dir + "/" + maxRune)
				continue
			}
			in.ContinuationToken = out.NextContinuationToken
			in.StartAfter = nil
		}
	}
}

// maxRune sorts after every valid UTF-8 sequence that can follow it, so
// dir+"/"+maxRune is past every key under dir/ (S3 keys are UTF-8).
const maxRune = "\U0010FFFF"

// hidden reports whether a path segment is one tidemark and other readers
// skip.
func hidden(seg string) bool { return strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") }

// visible reports whether key is listed under prefix: no segment is hidden
// unless prefix names it (the local store's rule: a hidden segment counts
// as named when the key up to it is a prefix of prefix).
func visible(key, prefix string) bool {
	for i := 0; i <= len(key); {
		end := strings.IndexByte(key[i:], '/')
		if end < 0 {
			end = len(key)
		} else {
			end += i
		}
		if hidden(key[i:end]) && !strings.HasPrefix(prefix, key[:end]) {
			return false
		}
		i = end + 1
	}
	return true
}

// hiddenDir returns the first folder of key that List skips (a hidden
// segment that is not the key's last), if any.
func hiddenDir(key, prefix string) (string, bool) {
	for i := 0; ; {
		end := strings.IndexByte(key[i:], '/')
		if end < 0 {
			return "", false
		}
		end += i
		if hidden(key[i:end]) && !strings.HasPrefix(prefix, key[:end]) {
			return key[:end], true
		}
		i = end + 1
	}
}
