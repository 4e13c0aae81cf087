package s3test

import (
	"net/http/httptest"
	"slices"
	"testing"
)

func TestOperation(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		copySource     bool
		want           string
	}{
		{"GET", "/", false, "ListBuckets"},
		{"GET", "/b?list-type=2&prefix=a%2F", false, "ListObjectsV2"},
		{"GET", "/b?prefix=a", false, "ListObjects"},
		{"GET", "/b?uploads&prefix=x", false, "ListMultipartUploads"},
		{"HEAD", "/b", false, "HeadBucket"},
		{"PUT", "/b", false, "CreateBucket"},
		{"POST", "/b?delete", false, "DeleteObjects"},
		{"GET", "/b/k/x.csv", false, "GetObject"},
		{"GET", "/b/k?x-id=GetObject", false, "GetObject"},
		{"HEAD", "/b/k", false, "HeadObject"},
		{"PUT", "/b/k", false, "PutObject"},
		{"PUT", "/b/k", true, "CopyObject"},
		{"PUT", "/b/k?partNumber=2&uploadId=u", false, "UploadPart"},
		{"PUT", "/b/k?partNumber=2&uploadId=u", true, "UploadPartCopy"},
		{"POST", "/b/k?uploads", false, "CreateMultipartUpload"},
		{"POST", "/b/k?uploadId=u", false, "CompleteMultipartUpload"},
		{"DELETE", "/b/k?uploadId=u", false, "AbortMultipartUpload"},
		{"GET", "/b/k?uploadId=u", false, "ListParts"},
		{"DELETE", "/b/k", false, "DeleteObject"},
		{"PUT", "/b/k?tagging", false, "PUT object?tagging"},
	} {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		if tt.copySource {
			r.Header.Set("X-Amz-Copy-Source", "b/src")
		}
		if got := Operation(r); got != tt.want {
			t.Errorf("Operation(%s %s) = %q, want %q", tt.method, tt.target, got, tt.want)
		}
	}
}

func TestBinaryMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOBIN", "")
	old := gopath
	gopath = func() string { return t.TempDir() }
	defer func() { gopath = old }()
	if _, err := Binary(); err == nil {
		t.Fatal("Binary() found versitygw in empty folders")
	}
}

func TestPassThenFault(t *testing.T) {
	p := &FaultProxy{counts: map[string]int{}, byBucket: map[[2]string]int{}}
	p.Pass(1, "ListObjectsV2")
	p.SlowDown(2, "ListObjectsV2")
	var got []bool
	for i := range 4 {
		got = append(got, p.take("ListObjectsV2", []string{"a", "b"}[i%2], "") != nil)
	}
	if want := []bool{false, true, true, false}; !slices.Equal(got, want) {
		t.Errorf("faults on four listings = %v, want %v", got, want)
	}
	if p.Injected() != 2 || p.Count("ListObjectsV2") != 4 {
		t.Errorf("injected %d of %d requests, want 2 of 4", p.Injected(), p.Count("ListObjectsV2"))
	}
	if a, b := p.CountIn("a", "ListObjectsV2"), p.CountIn("b", "ListObjectsV2"); a != 2 || b != 2 {
		t.Errorf("requests by bucket: a %d, b %d; want 2 each", a, b)
	}
}
