package iceberg

import (
	"context"
	"encoding/json"
	"errors"

	"net/http"
	"strings"
	"sync"

	iceberg "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/manifest"
)

// RESTHandler serves tidemark's own Iceberg catalog, in the state store
// at location, as an Iceberg REST catalog, read-only: the REST spec's
// read routes (config, namespaces, tables, load table, and HEAD for
// existence), so that Spark, Trino, pyiceberg or DuckDB read the tables
// tidemark's jobs write by pointing a REST catalog at it. Only tidemark
// commits to them: every write route answers 405 with an Iceberg error
// body. The routes are /v1/...: mount it under a prefix with
// http.StripPrefix. A state store without an own catalog (S3, memory) is
// ErrNoOwnCatalog.
func RESTHandler(location string) (http.Handler, error) {
	if _, err := stateDialect(location); err != nil {
		return nil, err
	}
	h := &restServer{location: location}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/config", h.config)
	mux.HandleFunc("GET /v1/namespaces", h.namespaces)
	mux.HandleFunc("GET /v1/namespaces/{ns}", h.namespace)
	mux.HandleFunc("HEAD /v1/namespaces/{ns}", h.namespace)
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables", h.tables)
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", h.table)
	mux.HandleFunc("HEAD /v1/namespaces/{ns}/tables/{table}", h.table)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			restError(w, http.StatusNotFound, "NotFoundException", "no such route of the Iceberg REST catalog: "+r.URL.Path)
			return
		}
		restError(w, http.StatusMethodNotAllowed, "MethodNotAllowedException", "tidemark serves its Iceberg catalog "+
			"read-only: its tables are written by tidemark jobs (an iceberg: sink), never through this catalog")
	})
	return mux, nil
}

// restServer opens the catalog at its first request and keeps it.
type restServer struct {
	location string
	once     sync.Once
	cat      *tableCatalog
	err      error
}

func (h *restServer) catalog(ctx context.Context) (*tableCatalog, error) {
	h.once.Do(func() { h.cat, h.err = openCatalog(ctx, manifest.Table{Connection: h.location}) })
	return h.cat, h.err
}

// restEndpoints are the routes /v1/config says the server answers.
var restEndpoints = []string{
	"GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
}

func (h *restServer) config(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}, "endpoints": restEndpoints})
}

func (h *restServer) namespaces(w http.ResponseWriter, r *http.Request) {
	cat, ok := h.open(w, r)
	if !ok {
		return
	}
	if p := r.URL.Query().Get("parent"); p != "" {
		// One level of namespaces: none has children.
		writeJSON(w, map[string]any{"namespaces": [][]string{}})
		return
	}
	nss, err := cat.ListNamespaces(r.Context(), nil)
	if err != nil {
		restError(w, http.StatusInternalServerError, "ServiceFailureException", "listing namespaces: "+err.Error())
		return
	}
	out := make([][]string, 0, len(nss))
	for _, ns := range nss {
		out = append(out, []string(ns))
	}
	writeJSON(w, map[string]any{"namespaces": out})
}

func (h *restServer) namespace(w http.ResponseWriter, r *http.Request) {
	cat, ok := h.open(w, r)
	if !ok {
		return
	}
	ns := namespaceOf(r)
	props, err := cat.LoadNamespaceProperties(r.Context(), ns)
	if errors.Is(err, icecat.ErrNoSuchNamespace) {
		restError(w, http.StatusNotFound, "NoSuchNamespaceException", "no namespace "+strings.Join(ns, "."))
		return
	}
	if err != nil {
		restError(w, http.StatusInternalServerError, "ServiceFailureException", "loading namespace: "+err.Error())
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if props == nil {
		props = iceberg.Properties{}
	}
	writeJSON(w, map[string]any{"namespace": ns, "properties": props})
}

func (h *restServer) tables(w http.ResponseWriter, r *http.Request) {
	cat, ok := h.open(w, r)
	if !ok {
		return
	}
	ns := namespaceOf(r)
	if exists, err := cat.CheckNamespaceExists(r.Context(), ns); err == nil && !exists {
		restError(w, http.StatusNotFound, "NoSuchNamespaceException", "no namespace "+strings.Join(ns, "."))
		return
	}
	type ident struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	}
	out := []ident{}
	for id, err := range cat.ListTables(r.Context(), ns) {
		if err != nil {
			restError(w, http.StatusInternalServerError, "ServiceFailureException", "listing tables: "+err.Error())
			return
		}
		out = append(out, ident{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	writeJSON(w, map[string]any{"identifiers": out})
}

func (h *restServer) table(w http.ResponseWriter, r *http.Request) {
	cat, ok := h.open(w, r)
	if !ok {
		return
	}
	id := append(table.Identifier{}, namespaceOf(r)...)
	id = append(id, r.PathValue("table"))
	tbl, exists, err := cat.load(r.Context(), id)
	switch {
	case err != nil:
		restError(w, http.StatusInternalServerError, "ServiceFailureException", err.Error())
		return
	case !exists:
		restError(w, http.StatusNotFound, "NoSuchTableException", "no table "+strings.Join(id, "."))
		return
	case r.Method == http.MethodHead:
		w.WriteHeader(http.StatusNoContent)
		return
	}
	meta, err := json.Marshal(tbl.Metadata())
	if err != nil {
		restError(w, http.StatusInternalServerError, "ServiceFailureException", "encoding the table's metadata: "+err.Error())
		return
	}
	writeJSON(w, map[string]any{"metadata-location": tbl.MetadataLocation(), "metadata": json.RawMessage(meta),
		"config": map[string]string{}})
}

// open is the catalog, or false after answering 503.
func (h *restServer) open(w http.ResponseWriter, r *http.Request) (*tableCatalog, bool) {
	cat, err := h.catalog(r.Context())
	if err != nil {
		restError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "opening the catalog: "+err.Error())
		return nil, false
	}
	return cat, true
}

// namespaceOf is the request's namespace: its levels are joined by the
// unit separator (0x1F) in the path, as the REST spec says.
func namespaceOf(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), "\x1f")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// restError answers the REST spec's error body.
func restError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
}
