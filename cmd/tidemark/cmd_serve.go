package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/serve"
	"github.com/tidemark-etl/tidemark/sink/iceberg"
	"github.com/tidemark-etl/tidemark/store"
)

// icebergPrefix is where serve answers as an Iceberg REST catalog.
const icebergPrefix = "/iceberg"

// serveFlags are `tidemark serve`'s flags.
type serveFlags struct {
	listen     string
	tokenEnv   string
	readToken  bool
	allowHosts []string
}

// defaultListen is serve's address: loopback only.
const defaultListen = "127.0.0.1:8484"

// shutdownGrace is how long serve waits for requests in flight after
// SIGINT or SIGTERM.
const shutdownGrace = 10 * time.Second

func newServeCmd(g *globals) *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve a dashboard, a JSON API and metrics over a state store",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, f)
		},
	}
	c.Flags().StringVar(&g.state, "state", "", "state store location")
	c.Flags().StringVar(&f.listen, "listen", defaultListen, "address to listen on (host:port)")
	c.Flags().StringVar(&f.tokenEnv, "token-env", "", "environment variable holding the token that enables actions (reset)")
	c.Flags().BoolVar(&f.readToken, "read-token", false, "reads (the API, /metrics) need the --token-env token too")
	c.Flags().StringArrayVar(&f.allowHosts, "allow-host", nil, "a host name requests may give in Host besides the listen address (repeatable; e.g. behind a proxy)")
	return c
}

// runServe is `tidemark serve`.
func runServe(ctx context.Context, g *globals, f *serveFlags) error {
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %q: want host:port, e.g. %s", f.listen, defaultListen)}
	}
	token := ""
	if f.tokenEnv != "" {
		if token = os.Getenv(f.tokenEnv); token == "" {
			return usageError{fmt.Errorf("--token-env %s: the variable is unset or empty", f.tokenEnv)}
		}
	}
	if f.readToken && token == "" {
		return usageError{errors.New("--read-token needs --token-env: the token reads must carry")}
	}
	for _, h := range f.allowHosts {
		if h == "" || strings.ContainsAny(h, "/ *") {
			return usageError{fmt.Errorf("--allow-host %q: want a host name, e.g. tidemark.example.com", h)}
		}
	}
	log := g.logger()
	loc, _ := tidemark.StateOrigin(g.state, nil)
	st, err := tidemark.OpenExistingState(ctx, g.state, nil, true)
	if err != nil {
		return err
	}
	defer st.Close()
	// A state store that holds tidemark's own Iceberg catalog (SQLite,
	// PostgreSQL) serves it read-only as an Iceberg REST catalog.
	mounts := map[string]http.Handler{}
	if id, err := st.Identity(ctx); err == nil {
		if rest, err := iceberg.RESTHandler(id.Location); err == nil {
			mounts[icebergPrefix] = rest
		}
	}
	h, err := serve.New(serve.Options{Store: st, StateLocation: loc, Token: token, Logger: log,
		ReadToken: f.readToken, Listen: f.listen, AllowHosts: f.allowHosts, Mounts: mounts})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", f.listen, err)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		if !f.readToken {
			log.Warn("serving beyond this machine: anyone who can reach the address can read the state (--read-token puts reads behind the token)", "listen", f.listen)
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context {
		return context.WithoutCancel(ctx)
	}}
	log.Info("serving", "url", "http://"+ln.Addr().String()+"/", "state", store.Redact(loc), "actions", token != "")
	if mounts[icebergPrefix] != nil {
		log.Info("serving the state's Iceberg catalog read-only as a REST catalog", "uri", "http://"+ln.Addr().String()+icebergPrefix)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "why", context.Cause(ctx))
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
