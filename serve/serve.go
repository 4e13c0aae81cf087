// Package serve is `tidemark serve`'s HTTP handler: a JSON API under
// /api/v1/ over one state store (the CLI's --json shapes, package view),
// its OpenAPI document, the dashboard's embedded assets at / and, when
// given, Prometheus metrics at /metrics. Reads use the store it is given
// (opened read-only by the caller); actions (a reset) are off unless a
// token is set, and open the store for writing only while they run. Every
// request must name the server in its Host header (hosts.go); reads may
// be put behind the token too (Options.ReadToken).
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/metrics"
	"github.com/tidemark-etl/tidemark/serve/web"
	"github.com/tidemark-etl/tidemark/store"
)

// Options are the settings of New.
type Options struct {
	// Store is the state store read by every route; the caller opens it
	// (read-only) and closes it after the server stopped.
	Store store.Store
	// StateLocation is where Store is (a path or URL): actions open it
	// writable, plans read it. It never appears in an answer unredacted.
	StateLocation string
	// Token enables actions: a request must carry it as a bearer token.
	// Empty: read-only, the action routes answer 404.
	Token string
	// ReadToken puts reads behind Token too: the API's routes (but the
	// session and the OpenAPI document) and the metrics answer 401
	// without it. It needs Token.
	ReadToken bool
	// Listen is the address the server listens on (host:port). A request
	// is answered only when its Host header names it: that host, any
	// loopback name when it is a loopback address ("" too), any IP
	// address when it is every interface, or one of AllowHosts. Other
	// Hosts (a page that rebound its DNS name to this address) get 403.
	Listen string
	// AllowHosts are more names (or host:port) the Host header may give.
	AllowHosts []string
	// Logger receives one line per action (the audit record) and errors.
	Logger *slog.Logger
	// Now is the clock of the plan cache; time.Now if nil.
	Now func() time.Time
	// Metrics is mounted at /metrics; by default metrics.Handler over
	// Store, with each job's backlog from the plan cache.
	Metrics http.Handler
	// OpenWritable opens the state store for an action; by default
	// store.OpenExisting(StateLocation, writable).
	OpenWritable func(ctx context.Context) (store.Store, error)
	// PlanEvery is how long a job's plan (its backlog) is reused before it
	// is computed again; 30s if zero.
	PlanEvery time.Duration
	// PlanTimeout bounds one plan; 20s if zero.
	PlanTimeout time.Duration
	// Mounts are more handlers, each answering the paths under its prefix
	// ("/iceberg/"), which it gets with the prefix stripped; reads there
	// need the token under ReadToken, as the API's do.
	Mounts map[string]http.Handler
}

// server is the handler's state.
type server struct {
	opts  Options
	log   *slog.Logger
	plans *planCache
}

// route is one API route: the method and pattern it is registered under
// (net/http's ServeMux syntax, which the OpenAPI paths use too).
type route struct {
	method, pattern string
	handle          func(*server, http.ResponseWriter, *http.Request)
}

// apiRoutes are the routes under /api/v1/; the OpenAPI document lists
// exactly these (a test checks).
var apiRoutes = []route{
	{"GET", "/api/v1/session", (*server).session},
	{"GET", "/api/v1/jobs", (*server).jobs},
	{"GET", "/api/v1/jobs/{job}", (*server).job},
	{"GET", "/api/v1/jobs/{job}/bookmark", (*server).bookmark},
	{"GET", "/api/v1/jobs/{job}/runs", (*server).runs},
	{"GET", "/api/v1/jobs/{job}/runs/{run}", (*server).run},
	{"GET", "/api/v1/jobs/{job}/plan", (*server).plan},
	{"GET", "/api/v1/jobs/{job}/history", (*server).history},
	{"POST", "/api/v1/jobs/{job}/reset", (*server).reset},
	{"GET", "/api/v1/openapi.json", (*server).openapi},
}

// New returns the handler of `tidemark serve`.
func New(opts Options) (http.Handler, error) {
	if opts.Store == nil {
		return nil, errors.New("serve: no state store")
	}
	if opts.ReadToken && opts.Token == "" {
		return nil, errors.New("serve: reads cannot need a token when no token is set")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PlanEvery <= 0 {
		opts.PlanEvery = 30 * time.Second
	}
	if opts.PlanTimeout <= 0 {
		opts.PlanTimeout = 20 * time.Second
	}
	if opts.OpenWritable == nil {
		loc := opts.StateLocation
		opts.OpenWritable = func(ctx context.Context) (store.Store, error) { return store.OpenExisting(ctx, loc, false) }
	}
	s := &server{opts: opts, log: opts.Logger}
	s.plans = newPlanCache(s)
	mux := http.NewServeMux()
	methods := map[string][]string{}
	for _, rt := range apiRoutes {
		mux.HandleFunc(rt.method+" "+rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
		methods[rt.pattern] = append(methods[rt.pattern], rt.method)
	}
	for pattern, ms := range methods {
		allow := strings.Join(ms, ", ")
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			s.fail(w, r, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: this route answers %s", r.Method, pattern, allow))
		})
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, errors.New("no such API route: "+r.Method+" "+r.URL.Path))
	})
	if opts.Metrics == nil {
		opts.Metrics = metrics.Handler(opts.Store, metrics.Options{Backlog: s.backlog, Logger: opts.Logger})
	}
	mux.Handle("GET /metrics", opts.Metrics)
	for prefix, h := range opts.Mounts {
		prefix = "/" + strings.Trim(prefix, "/") + "/"
		mux.Handle(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), h))
	}
	files := http.FileServerFS(web.Assets())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.fail(w, r, http.StatusMethodNotAllowed, errors.New("the dashboard is read with GET"))
			return
		}
		files.ServeHTTP(w, r)
	})
	return s.guard(mux), nil
}

// guard sets the headers every answer carries and turns a panic in a
// handler into a JSON 500 without a stack.
func (s *server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		if err := s.checkHost(r); err != nil {
			s.fail(w, r, 0, err)
			return
		}
		if err := s.checkReadToken(r); err != nil {
			w.Header().Set("WWW-Authenticate", "Bearer")
			s.fail(w, r, 0, err)
			return
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("serve: handler panicked", "path", r.URL.Path, "panic", s.clean(fmtAny(v)))
				s.fail(w, r, http.StatusInternalServerError, errors.New("internal error"))
			}
		}()
		h.ServeHTTP(w, r)
	})
}
