package spark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/apache/spark-connect-go/spark/sparkerrors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// Error is an error Spark reported, its class and SQLSTATE said once.
type Error struct {
	Class    string // e.g. TABLE_OR_VIEW_NOT_FOUND; may be empty
	SQLState string // e.g. 42P01; may be empty
	Code     codes.Code
	Msg      string
	// Cause is the deepest cause the server gave (FetchErrorDetails),
	// when the message itself hides it (FAILED_READ_FILE.NO_HINT).
	Cause string
	id    string // the server's error id, for FetchErrorDetails
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Class != "" {
		s = "[" + e.Class + "] " + s
	}
	if e.SQLState != "" {
		s += " (SQLSTATE " + e.SQLState + ")"
	}
	if e.Cause != "" {
		s += ": " + e.Cause
	}
	return s
}

// classPrefix and statePart are how Spark repeats class and state inside
// its messages, which Error says once.
var (
	classPrefix = regexp.MustCompile(`^\s*\[([A-Z0-9_.]+)\]\s*`)
	planPart    = regexp.MustCompile(`;?\s*\n\s*['+:]`)
	statePart   = regexp.MustCompile(`\s*\.?\s*SQLSTATE:\s*[0-9A-Z]{5}\.?`)
)

// grpcStatus finds the gRPC status in err's chain.
func grpcStatus(err error) (*status.Status, bool) {
	for e := err; e != nil; {
		if s, ok := status.FromError(e); ok && s.Code() != codes.Unknown {
			return s, true
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				if s, ok := grpcStatus(x); ok {
					return s, true
				}
			}
			return nil, false
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}

// cleanError turns an error of the Go client or of a raw call into an
// *Error, without the client's wrapping (which repeats the statement, and
// so any literal in it). Errors that are not Spark's pass as they are.
func cleanError(err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	var sp *sparkerrors.SparkError
	var e *Error
	if errors.As(err, &sp) {
		e = &Error{Code: sp.Code, Msg: sp.Message, Class: sp.ErrorClass, SQLState: sp.SqlState, id: sp.ErrorId}
	} else if st, ok := grpcStatus(err); ok {
		e = &Error{Code: st.Code(), Msg: st.Message()}
		sp = sparkerrors.FromRPCError(st.Err())
	} else {
		return err
	}
	if sp != nil {
		e.Class, e.SQLState, e.id = sp.ErrorClass, sp.SqlState, sp.ErrorId
		if sp.Message != "" {
			e.Msg = sp.Message
		}
	}
	if m := classPrefix.FindStringSubmatch(e.Msg); m != nil {
		if e.Class == "" {
			e.Class = m[1]
		}
		e.Msg = e.Msg[len(m[0]):]
	}
	if m := regexp.MustCompile(`SQLSTATE:\s*([0-9A-Z]{5})`).FindStringSubmatch(e.Msg); m != nil && e.SQLState == "" {
		e.SQLState = m[1]
	}
	// Analysis errors carry the plan after the message: not for users.
	if loc := planPart.FindStringIndex(e.Msg); loc != nil {
		e.Msg = e.Msg[:loc[0]]
	}
	e.Msg = strings.TrimSpace(statePart.ReplaceAllString(e.Msg, ""))
	e.Msg = strings.TrimSuffix(strings.Join(strings.Fields(e.Msg), " "), ";")
	return e
}

// unavailable reports whether err says the server could not be reached
// (or went away).
func unavailable(err error) bool {
	var se *Error
	if errors.As(err, &se) {
		return se.Code == codes.Unavailable
	}
	st, ok := grpcStatus(err)
	return ok && st.Code() == codes.Unavailable
}

// wrap says what was being done, keeping a canceled context visible.
func (x *execution) wrap(ctx context.Context, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if ctx.Err() != nil {
		x.s.interrupt()
		if x.timedOut(ctx) {
			return fmt.Errorf("%s: spark query_timeout %s exceeded: %w", what, x.e.opts.QueryTimeout, context.DeadlineExceeded)
		}
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if x.e != nil && x.e.timeout > 0 {
		// A statement the timeout interrupted can end another statement
		// of the session with a canceled stream: the timeout still is the
		// cause.
		if st, ok := grpcStatus(err); ok && (st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded) {
			return fmt.Errorf("%s: spark query_timeout %s exceeded: %w", what, x.e.opts.QueryTimeout, context.DeadlineExceeded)
		}
	}
	err = cleanError(err)
	var se *Error
	if errors.As(err, &se) && se.id != "" && se.Cause == "" && strings.HasSuffix(se.Class, "NO_HINT") {
		se.Cause = x.s.rootCause(ctx, se.id)
	}
	if unavailable(err) {
		return fmt.Errorf("%s: spark at %s: %w", what, x.s.remote, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// rootCause asks the server for an error's cause chain and returns the
// deepest cause's message ("" when it cannot tell).
func (s *session) rootCause(ctx context.Context, id string) string {
	if s == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := s.unaryResp(ctx, "FetchErrorDetails", "FetchErrorDetailsRequest", fmt.Sprintf(`"errorId": %q`, id))
	if err != nil {
		return ""
	}
	js, err := protojson.Marshal(resp)
	if err != nil {
		return ""
	}
	var d struct {
		RootErrorIdx int `json:"rootErrorIdx"`
		Errors       []struct {
			ErrorTypeHierarchy []string `json:"errorTypeHierarchy"`
			Message            string   `json:"message"`
			CauseIdx           *int     `json:"causeIdx"`
		} `json:"errors"`
	}
	if json.Unmarshal(js, &d) != nil || len(d.Errors) == 0 {
		return ""
	}
	i := d.RootErrorIdx
	for seen := 0; i >= 0 && i < len(d.Errors) && d.Errors[i].CauseIdx != nil && seen < len(d.Errors); seen++ {
		i = *d.Errors[i].CauseIdx
	}
	if i < 0 || i >= len(d.Errors) {
		return ""
	}
	msg := strings.Join(strings.Fields(d.Errors[i].Message), " ")
	if h := d.Errors[i].ErrorTypeHierarchy; len(h) > 0 {
		msg = h[0][strings.LastIndex(h[0], ".")+1:] + ": " + msg
	}
	return msg
}
