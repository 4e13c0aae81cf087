package files

import (
	"slices"
	"testing"
)

// TestParentLocations: the folders above a sink location, nearest first,
// up to the file system root or the bucket, with S3 options kept.
func TestParentLocations(t *testing.T) {
	for _, tc := range []struct {
		root string
		want []string
	}{
		{"/", nil},
		{"/a", []string{"/"}},
		{"/a/b", []string{"/a", "/"}},
		{"s3://b/", nil},
		{"s3://b", nil},
		{"s3://b//x/", []string{"s3://b/"}},
		{"s3://b/x/y/?region=eu-west-1", []string{"s3://b/x/?region=eu-west-1", "s3://b/?region=eu-west-1"}},
	} {
		if got := parentLocations(tc.root); !slices.Equal(got, tc.want) {
			t.Errorf("parentLocations(%q) = %q, want %q", tc.root, got, tc.want)
		}
	}
}
