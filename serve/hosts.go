package serve

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// A web page can rebind its own DNS name to 127.0.0.1 and then read the
// server from the operator's browser as its own origin: the browser sends
// that name in Host. So the server answers only requests whose Host names
// it: the address it listens on, a loopback name when it listens on
// loopback, an IP address when it listens on every interface, or a name
// the operator allowed (--allow-host). None of these is a name a page can
// point at the server.

// hostAllowed reports whether a request's Host header names this server.
func (s *server) hostAllowed(hostport string) bool {
	h := hostName(hostport)
	if h == "" {
		return false
	}
	for _, a := range s.opts.AllowHosts {
		if strings.EqualFold(hostName(a), h) || strings.EqualFold(strings.TrimSuffix(a, "."), h) {
			return true
		}
	}
	listen := hostName(s.opts.Listen)
	if s.opts.Listen == "" || listen == "localhost" || isLoopback(listen) {
		return h == "localhost" || isLoopback(h)
	}
	if ip := net.ParseIP(listen); ip != nil && ip.IsUnspecified() || s.opts.Listen != "" && listen == "" {
		return h == "localhost" || net.ParseIP(h) != nil
	}
	return h == listen
}

// hostName is the host of a host[:port], lower case, without brackets or
// a final dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	return strings.ToLower(h)
}

func isLoopback(h string) bool {
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkHost refuses a request whose Host does not name the server (403).
func (s *server) checkHost(r *http.Request) error {
	if s.hostAllowed(r.Host) {
		return nil
	}
	return withStatus(http.StatusForbidden, fmt.Errorf("this server does not answer to the host %q (a page that "+
		"renamed itself to this address, or a name it was not told): use the address it listens on, or start "+
		"tidemark serve with --allow-host NAME", r.Host))
}

// checkOrigin refuses a state-changing request sent by a page of another
// origin: its Origin, when the browser sends one, must be this server's
// own (the same host and port as the request's Host, which names it), and
// a browser's Sec-Fetch-Site must not say cross-site.
func (s *server) checkOrigin(r *http.Request) error {
	refused := withStatus(http.StatusForbidden, errors.New("an action must come from the dashboard's own origin"))
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return refused
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return nil // not sent by a browser's fetch or form
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || !strings.EqualFold(u.Host, r.Host) || !s.hostAllowed(u.Host) {
		return refused
	}
	return nil
}

// needsReadToken reports whether a request reads state that ReadToken
// puts behind the token: the API (but the session and the OpenAPI
// document, which hold none) and the metrics.
func (s *server) needsReadToken(r *http.Request) bool {
	if !s.opts.ReadToken {
		return false
	}
	p := r.URL.Path
	switch {
	case p == "/api/v1/session" || p == "/api/v1/openapi.json":
		return false
	case strings.HasPrefix(p, "/api/") || p == "/metrics" || strings.HasPrefix(p, "/metrics/"):
		return true
	}
	for prefix := range s.opts.Mounts {
		if strings.HasPrefix(p, "/"+strings.Trim(prefix, "/")+"/") {
			return true
		}
	}
	return false
}

// checkReadToken refuses a read that needs the token without it (401).
func (s *server) checkReadToken(r *http.Request) error {
	if !s.needsReadToken(r) {
		return nil
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(auth), []byte(s.opts.Token)) != 1 {
		return withStatus(http.StatusUnauthorized, errors.New("reading needs the header Authorization: Bearer <token> "+
			"(tidemark serve was started with --read-token)"))
	}
	return nil
}
