package spark

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

// TestReadsS3ThroughS3a: Spark reads s3:// inputs itself (s3a on
// versitygw, the AWS settings given as session conf), hive columns
// included; a missing object fails naming it, without the secret key.
func TestReadsS3ThroughS3a(t *testing.T) { testReadsS3(t, sparktest.Remote(t)) }

// TestReadsS3ThroughS3aCluster: the same on the standalone cluster, whose
// executors read the objects, with the session's s3a settings.
func TestReadsS3ThroughS3aCluster(t *testing.T) { testReadsS3(t, sparktest.Cluster(t)) }

func testReadsS3(t *testing.T, remote string) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	bucket := srv.NewBucket(t)
	client := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	for key, body := range map[string]string{"in/year=2024/a.csv": "id,name\n1,a\n2,b\n", "in/year=2025/b.csv": "id,name\n3,c\n"} {
		// Through the S3 API: s3a checks the objects' ETags.
		if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	e := newEngineOn(t, remote)
	t.Cleanup(func() { _ = e.Close() })
	if !e.Capabilities().Reads("s3") {
		t.Fatal("the engine does not say it reads s3://")
	}
	src := engine.Source{Ctx: "o", Format: "csv", Hive: true, Files: []engine.Input{
		{Location: "s3://" + bucket + "/in/year=2024/a.csv", Key: "year=2024/a.csv", Size: 16},
		{Location: "s3://" + bucket + "/in/year=2025/b.csv", Key: "year=2025/b.csv", Size: 12},
	}}
	out := filepath.Join(t.TempDir(), "out")
	res, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{{Ctx: "s", From: "o", Format: "csv", Location: out}}})
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	if got := res.Sources["o"].Rows; got != 3 {
		t.Errorf("rows: got %d, want 3", got)
	}
	var all []string
	for _, f := range res.Sinks["s"].Files {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, strings.Split(strings.TrimSpace(string(data)), "\n")[1:]...)
	}
	if got := strings.Join(sortedCopy(all), " "); got != "1,a,2024 2,b,2024 3,c,2025" {
		t.Errorf("rows written: got %q, want 1,a,2024 2,b,2024 3,c,2025", got)
	}

	missing := src
	missing.Files = []engine.Input{{Location: "s3://" + bucket + "/in/nosuch.csv", Key: "nosuch.csv", Size: 5}}
	_, err = e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{missing}, Sinks: []engine.Sink{{Ctx: "s", From: "o", Format: "csv", Location: filepath.Join(t.TempDir(), "out")}}})
	if err == nil || !strings.Contains(err.Error(), "nosuch.csv") {
		t.Errorf("a missing object: got %v, want an error naming it", err)
	}
	if err != nil && strings.Contains(err.Error(), srv.SecretKey) {
		t.Errorf("the error shows the secret key: %v", err)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestParquetColumnsOnS3: the columns of Parquet files Spark reads from
// s3:// (their footers read by Spark, not here) are checked as local
// ones: a file with a column the schema lacks, lacking one, or of another
// type fails naming the file and the column; files of the schema's
// columns are read.
func TestParquetColumnsOnS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	bucket := srv.NewBucket(t)
	client := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	duck := newDuck(t)
	put := func(key, csvText string) engine.Input {
		in := duckParquet(t, duck, nil, csvText)
		p := strings.TrimPrefix(in.Location, "file://")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(string(data))}); err != nil {
			t.Fatal(err)
		}
		return engine.Input{Location: "s3://" + bucket + "/" + key, Key: key, Size: int64(len(data))}
	}
	mon := put("mon.parquet", "id,amount\n1,2\n")
	e := newEngine(t)
	t.Cleanup(func() { _ = e.Close() })
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}
	run := func(files ...engine.Input) (engine.Result, error) {
		return e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "o", Format: "parquet", Schema: schema, Files: files}},
			Sinks: []engine.Sink{{Ctx: "s", From: "o", Format: "csv", Location: filepath.Join(t.TempDir(), "out")}}})
	}
	res, err := run(mon, put("tue.parquet", "id,amount\n2,3\n"))
	if err != nil || res.Sources["o"].Rows != 2 {
		t.Fatalf("files of the schema's columns: got %v rows, error %v; want 2 rows", res.Sources["o"].Rows, err)
	}
	for _, c := range []struct{ key, csv, column string }{
		{"thu.parquet", "id,amount,coupon\n2,3,X\n", "coupon"},
		{"sat.parquet", "id\n5\n", "amount"},
		{"sun.parquet", "id,amount\n6,2026-01-02\n", "amount"},
	} {
		_, err := run(mon, put(c.key, c.csv))
		var ie *engine.InputError
		if !errors.As(err, &ie) || ie.File != c.key || ie.Column != c.column {
			t.Errorf("%s: got %v, want an input error naming it and column %s", c.key, err, c.column)
		}
	}
}
