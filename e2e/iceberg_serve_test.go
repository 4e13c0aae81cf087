package e2e

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIcebergServedAsREST: `tidemark serve` over a state that holds
// tidemark's own Iceberg catalog answers as an Iceberg REST catalog under
// /iceberg: pyiceberg's RestCatalog reads the table the job wrote, with
// every row and the run's snapshot, and sees the next run's rows without
// a restart; a write through it is refused (405), and with --read-token
// a read without the token is refused (401).
func TestIcebergServedAsREST(t *testing.T) {
	t.Parallel()
	for _, ss := range icebergStores() {
		t.Run(ss.name, func(t *testing.T) {
			t.Parallel()
			f, state := icebergFixture(t, ss, "append")
			monday := f.addCSVs("monday", 4, 20)
			mon := f.mustRun()

			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			ln.Close()
			const token = "tm-serve-token-77"
			p := f.start([]string{"SERVE_TOKEN=" + token}, "serve", "--state", state, "--listen", addr,
				"--token-env", "SERVE_TOKEN", "--read-token")
			p.waitFor(t, "serving", 30*time.Second)
			uri := "http://" + addr + "/iceberg"
			read := []string{"ICEBERG_TOKEN=" + token}

			v := readIceberg(t, uri, read)
			assertIcebergIDs(t, "through serve after Monday", v, monday)
			if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID}) {
				t.Errorf("through serve: snapshots name runs %q, want [%s]", got, mon.RunID)
			}
			tuesday := f.addCSVs("tuesday", 2, 20)
			f.mustRun()
			assertIcebergIDs(t, "through serve after Tuesday", readIceberg(t, uri, read), concat(monday, tuesday))

			do := func(method, path string, auth bool) int {
				req, err := http.NewRequestWithContext(t.Context(), method, uri+path, strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				if auth {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if c := do("POST", "/v1/namespaces/sales/tables/orders", true); c != http.StatusMethodNotAllowed {
				t.Errorf("a commit through the served catalog: %d, want 405", c)
			}
			if c := do("DELETE", "/v1/namespaces/sales/tables/orders", true); c != http.StatusMethodNotAllowed {
				t.Errorf("a drop through the served catalog: %d, want 405", c)
			}
			if c := do("GET", "/v1/namespaces/sales/tables/orders", false); c != http.StatusUnauthorized {
				t.Errorf("a read without the token under --read-token: %d, want 401", c)
			}
			if c := do("GET", "/v1/namespaces/sales/tables/nope", true); c != http.StatusNotFound {
				t.Errorf("loading a table that does not exist: %d, want 404", c)
			}
			assertIcebergIDs(t, "after the refused writes", readIceberg(t, uri, read), concat(monday, tuesday))
		})
	}
}
