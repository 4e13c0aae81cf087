package s3test

import (
	"net/http/httptest"
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
