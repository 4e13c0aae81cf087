package s3

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tidemark-etl/tidemark/objstore"
)

// Error is a failed S3 request, after any retries: what was being done,
// where, and what the service answered. It never holds credentials.
type Error struct {
	Op        string // S3 operation, e.g. "PutObject"
	Bucket    string
	Key       string // S3 key; "" for bucket-level operations
	Status    int    // HTTP status; 0 when no answer came (connection errors)
	Code      string // S3 error code, e.g. "SlowDown", "AccessDenied"
	Message   string // the service's message
	RequestID string
	Attempts  int    // attempts made when retries ran out; 0 if not retried
	Region    string // the bucket's real region, when the service named it
	Err       error  // the SDK's error
}

// Error says what failed, where, what the service answered and, for
// permanent errors, what to check.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "s3 %s s3://%s/%s: ", e.Op, e.Bucket, e.Key)
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
		if e.Code != "" {
			fmt.Fprintf(&b, " (%s)", e.Code)
		}
		if e.Message != "" {
			fmt.Fprintf(&b, ": %s", e.Message)
		}
	case e.Err != nil:
		b.WriteString(rootCause(e.Err).Error())
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, ", request id %s", e.RequestID)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, ", gave up after %d attempts", e.Attempts)
	}
	if h := e.hint(); h != "" {
		b.WriteString("; ")
		b.WriteString(h)
	}
	return b.String()
}

// hint says what a user can do about a permanent error.
func (e *Error) hint() string {
	switch {
	case e.Status == 0 && isCredentialsError(e.Err):
		return "no usable AWS credentials: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the store's profile option, or run with a role"
	case e.Code == "NoSuchBucket":
		return fmt.Sprintf("bucket %q does not exist (or the endpoint is wrong)", e.Bucket)
	case e.Region != "" || e.Status == http.StatusMovedPermanently || e.Code == "PermanentRedirect" || e.Code == "AuthorizationHeaderMalformed":
		if e.Region != "" {
			return fmt.Sprintf("bucket %q is in region %s: set AWS_REGION or the store's region option", e.Bucket, e.Region)
		}
		return fmt.Sprintf("bucket %q is in another region: set AWS_REGION or the store's region option", e.Bucket)
	case e.Code == "InvalidAccessKeyId" || e.Code == "SignatureDoesNotMatch":
		return "the credentials are wrong: check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the profile"
	case e.Status == http.StatusForbidden:
		return "access denied: check the credentials and the bucket's policy"
	}
	return ""
}

// Unwrap returns the SDK's error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes a missing object (not a missing bucket) match objstore.ErrNotExist.
func (e *Error) Is(target error) bool {
	return target == objstore.ErrNotExist && notFound(e)
}

func notFound(e *Error) bool {
	return e.Code == "NoSuchKey" || e.Code == "NotFound" || (e.Status == http.StatusNotFound && e.Code != "NoSuchBucket" && e.Code != "NoSuchUpload")
}

// wrap turns an SDK error into an *Error; nil stays nil. Context errors
// still match errors.Is(err, context.Canceled).
func (s *Store) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, Bucket: s.bucket, Key: key, Err: err}
	if isCredentialsError(err) {
		return e // a status in there is the credential source's (IMDS, STS), not S3's
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		e.Status = re.Response.StatusCode
		e.Region = re.Response.Header.Get("X-Amz-Bucket-Region")
		if e.Region == s.Region() {
			e.Region = ""
		}
	}
	var rid interface{ ServiceRequestID() string }
	if errors.As(err, &rid) {
		e.RequestID = rid.ServiceRequestID()
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		e.Code, e.Message = api.ErrorCode(), api.ErrorMessage()
		if e.Code == http.StatusText(e.Status) || e.Code == fmt.Sprint(e.Status) {
			e.Code = "" // HEAD errors have no body: the SDK makes a code of the status
		}
		if e.Message == http.StatusText(e.Status) {
			e.Message = ""
		}
		if e.Region == "" && e.Code == "AuthorizationHeaderMalformed" {
			// "the region 'us-east-1' is wrong; expecting 'eu-west-1'"
			if m := expectingRegion.FindStringSubmatch(e.Message); m != nil {
				e.Region = m[1]
			}
		}
		if e.Status == http.StatusNotFound && e.Code == "" {
			e.Code = "NotFound"
		}
	}
	var max *retry.MaxAttemptsError
	if errors.As(err, &max) {
		e.Attempts = max.Attempt
	}
	return e
}

var expectingRegion = regexp.MustCompile(`expecting ['"]([a-z0-9-]+)['"]`)

// isCredentialsError reports whether the SDK could not get credentials
// to sign the request with (its signer wraps that as "get identity").
func isCredentialsError(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "get identity") || strings.Contains(msg, "retrieve credentials")
}

// rootCause strips the SDK's "operation error S3: X, https response error
// ..." wrapping from a connection error, keeping the innermost message.
func rootCause(err error) error {
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	var max *retry.MaxAttemptsError
	if errors.As(err, &max) {
		err = max.Err
	}
	var re *smithyhttp.RequestSendError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}
