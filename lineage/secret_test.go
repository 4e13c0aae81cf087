package lineage_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/lineage"
)

func slogTo(w *syncbuf.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

const key = "olk-5ecret-api-key-7781"

// TestKeyNeverLogged: the API key reaches the endpoint and nothing else:
// not the log of a refused or failed POST (even one whose answer echoes
// it), not an error, not the log of an unset api_key_env.
func TestKeyNeverLogged(t *testing.T) {
	var gotAuth []string
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("bad key " + r.Header.Get("Authorization")))
	}))
	defer echo.Close()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // the body unread, the server would not notice the client leave
	}))
	defer hang.Close()
	defer close(release)

	var logs syncbuf.Buffer
	for _, u := range []string{echo.URL, hang.URL, "http://127.0.0.1:1", "http://user:" + key + "@127.0.0.1:1/x?k=" + key} {
		c, err := lineage.NewClient(lineage.Config{URL: u, APIKey: key, Timeout: 300 * time.Millisecond}, slogTo(&logs))
		if err != nil {
			t.Fatal(err)
		}
		c.Send(lineage.RunEvent{EventType: lineage.EventStart})
		c.Send(lineage.RunEvent{EventType: lineage.EventComplete})
		c.Close(100 * time.Millisecond)
	}
	if _, err := lineage.NewClient(lineage.Config{URL: "ftp://u:" + key + "@h/"}, nil); err == nil {
		t.Errorf("an ftp:// URL: got no error")
	} else if strings.Contains(err.Error(), key) {
		t.Errorf("the error shows the key: %v", err)
	}
	spec := &job.Spec{Lineage: job.Lineage{URL: echo.URL, APIKeyEnv: "TIDEMARK_TEST_UNSET_KEY"}}
	cfg, ok := lineage.ConfigOf(spec, func(v string) string {
		if v == "OPENLINEAGE_API_KEY" {
			return key
		}
		return ""
	}, slogTo(&logs))
	if !ok || cfg.APIKey != "" {
		t.Errorf("ConfigOf with an unset api_key_env: got %+v %v, want the URL without a key", cfg, ok)
	}
	if len(gotAuth) == 0 || gotAuth[0] != "Bearer "+key {
		t.Fatalf("the endpoint got Authorization %v, want the key", gotAuth)
	}
	out := logs.String()
	if !strings.Contains(out, "401") || !strings.Contains(out, "lineage") {
		t.Errorf("the failures were not logged:\n%s", out)
	}
	if strings.Contains(out, key) {
		t.Errorf("the log shows the API key:\n%s", out)
	}
}

// TestConfigOf: the job file's lineage: block wins over OPENLINEAGE_URL;
// its api_key_env names the key's variable.
func TestConfigOf(t *testing.T) {
	env := map[string]string{"OPENLINEAGE_URL": "http://env:5000", "OPENLINEAGE_API_KEY": "envkey", "MY_KEY": "mine"}
	getenv := func(v string) string { return env[v] }
	for _, tc := range []struct {
		l       job.Lineage
		url, ak string
	}{
		{job.Lineage{}, "http://env:5000", "envkey"},
		{job.Lineage{URL: "http://file:5000"}, "http://file:5000", "envkey"},
		{job.Lineage{URL: "http://file:5000", APIKeyEnv: "MY_KEY"}, "http://file:5000", "mine"},
	} {
		cfg, ok := lineage.ConfigOf(&job.Spec{Lineage: tc.l}, getenv, nil)
		if !ok || cfg.URL != tc.url || cfg.APIKey != tc.ak {
			t.Errorf("%+v: got %+v %v, want %s %s", tc.l, cfg, ok, tc.url, tc.ak)
		}
	}
	if _, ok := lineage.ConfigOf(&job.Spec{}, func(string) string { return "" }, nil); ok {
		t.Errorf("no URL anywhere: got events on")
	}
}
