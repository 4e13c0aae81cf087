package spark

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/apache/spark-connect-go/spark/client/channel"
	sparksql "github.com/apache/spark-connect-go/spark/sql"
)

// session is one Spark Connect session: the Go client's, for queries whose
// few result rows come back (counts, schemas), and the same session's raw
// gRPC stub, for what the client does not expose (a read with a schema and
// many paths, a write with partition columns, interrupting and releasing
// the session). Both go over one connection.
type session struct {
	remote  string // for messages: sc://host:port without parameters
	conn    *grpc.ClientConn
	builder channel.Builder
	client  sparksql.SparkSession
	id      string
	user    string
	md      metadata.MD
}

// connBuilder hands the Go client a connection made already.
type connBuilder struct {
	channel.Builder
	conn *grpc.ClientConn
}

func (b connBuilder) Build(context.Context) (*grpc.ClientConn, error) { return b.conn, nil }

// displayRemote is remote without its ;key=value parameters (a token may be
// one of them): what messages name.
func displayRemote(remote string) string {
	if i := strings.Index(remote, "/;"); i >= 0 {
		remote = remote[:i]
	}
	if u, err := url.Parse(remote); err == nil && u.Host != "" {
		return "sc://" + u.Host
	}
	return remote
}

// connect opens a session on remote and checks, within timeout, that the
// server answers: the Go client's Build does not contact it.
func connect(ctx context.Context, remote string, timeout time.Duration) (*session, error) {
	shown := displayRemote(remote)
	b, err := channel.NewBuilder(remote)
	if err != nil {
		return nil, fmt.Errorf("spark remote %s: %w", shown, err)
	}
	conn, err := dial(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("connecting to spark at %s: %w", shown, err)
	}
	client, err := sparksql.NewSessionBuilder().WithChannelBuilder(connBuilder{b, conn}).Build(ctx)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to spark at %s: %w", shown, err)
	}
	s := &session{remote: shown, conn: conn, builder: b, client: client, user: b.User(), md: metadata.MD{}}
	for k, v := range b.Headers() {
		s.md[k] = append(s.md[k], v)
	}
	// The client keeps its session id to itself; the raw calls must use
	// the same one, so that they see the same temporary views.
	if v := reflect.ValueOf(client); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("sessionId"); f.IsValid() && f.Kind() == reflect.String {
			s.id = f.String()
		}
	}
	if _, err := uuid.Parse(s.id); err != nil {
		conn.Close()
		return nil, fmt.Errorf("spark client: cannot tell its session id (a client version other than the pinned one?)")
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := s.query(pctx, "SELECT 1"); err != nil {
		conn.Close()
		if pctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("connecting to spark at %s: no answer within %s", shown, timeout)
		}
		return nil, fmt.Errorf("connecting to spark at %s: %w", shown, cleanError(err))
	}
	return s, nil
}

// dial makes the connection. The Go client takes use_ssl for a header and
// uses TLS only with a token: use_ssl=true without one would connect in
// plain text. Here use_ssl=true means TLS (system roots), as in pyspark;
// the parameter is not sent as a header.
func dial(ctx context.Context, b *channel.BaseBuilder) (*grpc.ClientConn, error) {
	ssl := false
	for k, v := range b.Headers() {
		if strings.EqualFold(k, "use_ssl") {
			ssl = ssl || strings.EqualFold(v, "true")
			delete(b.Headers(), k)
		}
	}
	if !ssl || b.Token() != "" {
		return b.Build(ctx)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(net.JoinHostPort(b.Host(), strconv.Itoa(b.Port())), grpc.WithAuthority(b.Host()),
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots})))
}

// query runs a query and returns its rows: for small results only.
func (s *session) query(ctx context.Context, q string) ([][]any, error) {
	df, err := s.client.Sql(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r.Values()
	}
	return out, nil
}

// setConf sets a session conf entry.
func (s *session) setConf(ctx context.Context, key, value string) error {
	return s.client.Config().Set(ctx, key, value)
}

const service = "/spark.connect.SparkConnectService/"

// message returns a fresh message of the Spark Connect type name (the
// protocol's generated types are the Go client's own, registered with the
// protobuf registry), filled from its JSON form.
func message(name string, js string) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("spark.connect." + name))
	if err != nil {
		return nil, fmt.Errorf("spark client: no %s message: %w", name, err)
	}
	m := mt.New().Interface()
	if js != "" {
		if err := protojson.Unmarshal([]byte(js), m); err != nil {
			return nil, fmt.Errorf("spark client: building %s: %w", name, err)
		}
	}
	return m, nil
}

func (s *session) outgoing(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, s.md)
}

// header is the JSON of the fields every request starts with.
func (s *session) header() string {
	return fmt.Sprintf(`"sessionId": %q, "userContext": {"userId": %q}, "clientType": "tidemark"`, s.id, s.user)
}

// command runs a command (its JSON, a spark.connect.Command) to the end.
// Its results are not read: commands here return none worth reading.
func (s *session) command(ctx context.Context, commandJSON string) error {
	req, err := message("ExecutePlanRequest", fmt.Sprintf(`{%s, "operationId": %q, "plan": {"command": %s}}`,
		s.header(), uuid.NewString(), commandJSON))
	if err != nil {
		return err
	}
	stream, err := s.conn.NewStream(s.outgoing(ctx), &grpc.StreamDesc{ServerStreams: true}, service+"ExecutePlan")
	if err != nil {
		return err
	}
	if err := stream.SendMsg(req); err != nil {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	resp, err := message("ExecutePlanResponse", "")
	if err != nil {
		return err
	}
	for {
		if err := stream.RecvMsg(resp); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// unary calls one of the service's unary methods with a request of
// message type name (its JSON fields after the header).
func (s *session) unary(ctx context.Context, method, name, fields string) error {
	_, err := s.unaryResp(ctx, method, name, fields)
	return err
}

// unaryResp is unary returning the response.
func (s *session) unaryResp(ctx context.Context, method, name, fields string) (proto.Message, error) {
	js := "{" + s.header()
	if fields != "" {
		js += ", " + fields
	}
	req, err := message(name, js+"}")
	if err != nil {
		return nil, err
	}
	resp, err := message(strings.TrimSuffix(name, "Request")+"Response", "")
	if err != nil {
		return nil, err
	}
	return resp, s.conn.Invoke(s.outgoing(ctx), service+method, req, resp)
}

// interrupt stops every operation of the session (a canceled or timed
// out statement: the server would otherwise go on with it).
func (s *session) interrupt() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.unary(ctx, "Interrupt", "InterruptRequest", `"interruptType": "INTERRUPT_TYPE_ALL"`)
}

// close releases the session on the server (its temporary views and
// conf go with it) and closes the connection. The Go client's Stop does
// neither.
func (s *session) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.unary(ctx, "ReleaseSession", "ReleaseSessionRequest", "")
	if cerr := s.conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("releasing spark session at %s: %w", s.remote, cleanError(err))
	}
	return nil
}
