package s3

import (
	"context"
	"fmt"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/objstore"
)

// BenchmarkListSkipping compares List with ListSkipping over 100,000
// objects in date-named folders (sales/2026/MM/DD/, 1,000 a day, as the
// bench's s3-noop scenario), the layout that makes ListSkipping hold
// objects back: every folder sorts before its _tidemark/.
//
//	go test ./objstore/s3 -run '^$' -bench ListSkipping -benchtime 5x
func BenchmarkListSkipping(b *testing.B) {
	srv := s3test.Start(b)
	bucket := srv.NewBucket(b)
	const n, perDay = 100_000, 1000
	key := func(i int) string {
		day := i / perDay
		return fmt.Sprintf("sales/2026/%02d/%02d/%05d-%06d.csv", 1+day/28, 1+day%28, i%perDay, i)
	}
	for i := range n {
		var err error
		if first := i - i%perDay; i == first { // a file per day, linked (a file has at most 65,000 links)
			err = srv.WriteObjectFile(bucket, key(i), []byte("order_id\n1\n"))
		} else {
			err = srv.LinkObjectFile(bucket, key(first), key(i))
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	s := newStore(b, srv, "", bucket, "sales/", nil)
	count := func(seq func(func(objstore.Object, error) bool)) int {
		got := 0
		for _, err := range seq {
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("listed %d objects, want %d", got, n)
		}
		return got
	}
	// Alternate the two, so that a disturbance hits both alike.
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			count(s.List(context.Background(), ""))
		}
	})
	b.Run("ListSkipping", func(b *testing.B) {
		s.ResetRequests()
		for b.Loop() {
			count(s.ListSkipping(context.Background(), "_tidemark", nil))
		}
		b.ReportMetric(float64(s.Requests()["ListObjectsV2"])/float64(b.N), "requests/op")
	})
	b.Run("List-again", func(b *testing.B) {
		s.ResetRequests()
		for b.Loop() {
			count(s.List(context.Background(), ""))
		}
		b.ReportMetric(float64(s.Requests()["ListObjectsV2"])/float64(b.N), "requests/op")
	})
}
