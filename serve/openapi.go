package serve

import "net/http"

// obj is a JSON object of the OpenAPI document.
type obj = map[string]any

// ref points at a schema of the document's components.
func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// jsonBody is a JSON content of one schema.
func jsonBody(schema obj) obj { return obj{"application/json": obj{"schema": schema}} }

// answer is a response of one schema.
func answer(desc string, schema obj) obj {
	return obj{"description": desc, "content": jsonBody(schema)}
}

// errorsOf are the error responses of an operation.
func errorsOf(codes ...string) obj {
	desc := map[string]string{"400": "bad request", "403": "no token, or no CSRF header matching the cookie",
		"404": "unknown job or run (or actions off)", "409": "conflict: no job file, or the job is being run",
		"503": "the state store is unreachable or locked"}
	o := obj{}
	for _, c := range codes {
		o[c] = answer(desc[c], ref("Error"))
	}
	return o
}

// op is one operation: its summary, parameters and responses.
func op(id, summary string, params []obj, ok obj, errs obj) obj {
	resp := obj{"200": ok}
	for k, v := range errs {
		resp[k] = v
	}
	o := obj{"operationId": id, "summary": summary, "responses": resp}
	if len(params) > 0 {
		o["parameters"] = params
	}
	return o
}

// param is a path or query parameter.
func param(in, name, typ, desc string) obj {
	return obj{"name": name, "in": in, "required": in == "path", "description": desc, "schema": obj{"type": typ}}
}

var (
	jobParam   = param("path", "job", "string", "the job name")
	runParam   = param("path", "run", "string", "the run id")
	limitQuery = param("query", "limit", "integer", "page size (at most 1000)")
)

// openAPIDoc is the OpenAPI 3.0 document of apiRoutes.
func openAPIDoc() obj {
	anyObj := obj{"type": "object", "additionalProperties": true}
	strs := obj{"type": "array", "items": obj{"type": "string"}}
	schemas := obj{
		"Error":      obj{"type": "object", "required": []string{"error"}, "properties": obj{"error": obj{"type": "string"}}},
		"Result":     obj{"type": "object", "description": "run --json's object and the run's seq", "additionalProperties": true},
		"PlanResult": obj{"type": "object", "description": "plan --json's object", "additionalProperties": true},
		"Bookmark":   obj{"type": "object", "description": "bookmark show --json's object", "additionalProperties": true},
		"JobSummary": obj{"type": "object", "properties": obj{"job": obj{"type": "string"}, "version": obj{"type": "integer"},
			"run_id": obj{"type": "string"}, "last_run": obj{"allOf": []obj{ref("Result")}, "nullable": true},
			"backlog": obj{"allOf": []obj{ref("PlanResult")}, "nullable": true}, "backlog_error": obj{"type": "string"},
			"recent": obj{"type": "object", "description": "the job's last 20 runs counted by status (the rest are running)",
				"properties": obj{"runs": obj{"type": "integer"}, "succeeded": obj{"type": "integer"}, "failed": obj{"type": "integer"}}},
			"last_read_run": obj{"allOf": []obj{ref("Result")}, "description": "the newest succeeded run that read rows or files, among the last 200; absent when none did"}}},
		"Job": obj{"type": "object", "properties": obj{"job": obj{"type": "string"}, "version": obj{"type": "integer"},
			"run_id": obj{"type": "string"}, "bookmark": ref("Bookmark"), "last_run": obj{"allOf": []obj{ref("Result")}, "nullable": true},
			"job_file": obj{"type": "string"},
			"newest_files": obj{"type": "object", "description": "per exact-tracking file source ctx, the up to 10 files processed most recently, newest first",
				"additionalProperties": obj{"type": "array", "items": obj{"type": "object", "properties": obj{
					"path": obj{"type": "string"}, "size": obj{"type": "integer"}, "mtime": obj{"type": "integer"}}}}},
			"shown": obj{"type": "object", "description": "per source ctx, what the dashboard shows of its state, as the source's kind shows it; format int, bytes, nanos (a Unix time in nanoseconds) or none (text)",
				"additionalProperties": obj{"type": "array", "items": obj{"type": "object", "properties": obj{
					"label": obj{"type": "string"}, "value": obj{}, "format": obj{"type": "string"}, "test": obj{"type": "string"}}}}}}},
		"RunsPage": obj{"type": "object", "properties": obj{"runs": obj{"type": "array", "items": ref("Result")},
			"next_before": obj{"type": "integer", "description": "before= of the next page; 0 on the last"}}},
		"RunDetail": obj{"type": "object", "properties": obj{"run": ref("Result"),
			"outputs":  obj{"type": "object", "properties": obj{"items": obj{"type": "array", "items": anyObj}, "total": obj{"type": "integer"}}},
			"inputs":   obj{"type": "object", "properties": obj{"items": obj{"type": "array", "items": anyObj}, "total": obj{"type": "integer"}}},
			"attempts": obj{"type": "array", "items": ref("Result")},
			"bookmark_diff": obj{"allOf": []obj{ref("BookmarkDiff")}, "nullable": true,
				"description": "the bookmark change the run committed; null unless it committed a version"},
			"started_from": obj{"type": "integer", "description": "for a failed or running run (which committed no version): the bookmark version the job was at when it started, 0 for the empty bookmark; absent when the history cannot tell"}}},
		"Version": obj{"type": "object", "properties": obj{"version": obj{"type": "integer"},
			"kind":   obj{"type": "string", "enum": []string{"commit", "reset", "rewind"}},
			"run_id": obj{"type": "string", "description": "the committing run, or the rewind target"},
			"at":     obj{"type": "string", "format": "date-time"},
			"by":     obj{"type": "string", "description": "who asked for a reset or rewind"}}},
		"HistoryPage": obj{"type": "object", "properties": obj{"versions": obj{"type": "array", "items": ref("Version")},
			"next_before": obj{"type": "integer", "description": "before= of the next page; 0 on the last"}}},
		"BookmarkDiff": obj{"type": "object", "properties": obj{"version": obj{"type": "integer"},
			"before": obj{"type": "integer", "description": "the version before (0: none)"},
			"sources": obj{"type": "object", "description": "per source ctx: its state before (null: new) and after (null: gone)",
				"additionalProperties": obj{"type": "object", "properties": obj{
					"before": obj{"type": "object", "nullable": true, "additionalProperties": true},
					"after":  obj{"type": "object", "nullable": true, "additionalProperties": true},
					"shown_before": obj{"type": "array", "items": obj{"type": "object", "additionalProperties": true},
						"description": "what the diff compares of the state before, as the source's kind shows it ({label, value, format})"},
					"shown_after": obj{"type": "array", "items": obj{"type": "object", "additionalProperties": true},
						"description": "the same of the state after"}}}}}},
		"ResetRequest": obj{"type": "object", "properties": obj{"to_run": obj{"type": "string"}, "purge": obj{"type": "boolean"},
			"dry_run": obj{"type": "boolean"}}},
		"ResetPreview": obj{"type": "object", "properties": obj{"undo": strs, "delete": strs}},
		"ResetResult":  obj{"type": "object", "description": "bookmark reset --json's object", "additionalProperties": true},
	}
	paths := obj{
		"/api/v1/session": obj{"get": op("session", "Whether actions are on; sets the tidemark_csrf cookie", nil,
			answer("ok", obj{"type": "object", "properties": obj{"actions": obj{"type": "boolean"},
				"reads_need_token": obj{"type": "boolean", "description": "reads need the token (serve --read-token)"}}}), errorsOf())},
		"/api/v1/jobs": obj{"get": op("listJobs", "Every job: head, last run, backlog", nil,
			answer("ok", obj{"type": "object", "properties": obj{"jobs": obj{"type": "array", "items": ref("JobSummary")}}}), errorsOf("503"))},
		"/api/v1/jobs/{job}": obj{"get": op("getJob", "A job: head, bookmark, last run, job file", []obj{jobParam},
			answer("ok", ref("Job")), errorsOf("404", "503"))},
		"/api/v1/jobs/{job}/bookmark": obj{"get": op("getBookmark", "bookmark show --json", []obj{jobParam},
			answer("ok", ref("Bookmark")), errorsOf("404", "503"))},
		"/api/v1/jobs/{job}/runs": obj{"get": op("listRuns", "The job's runs, newest first, paged",
			[]obj{jobParam, limitQuery, param("query", "before", "integer", "only runs with a seq below this")},
			answer("ok", ref("RunsPage")), errorsOf("400", "404", "503"))},
		"/api/v1/jobs/{job}/runs/{run}": obj{"get": op("getRun", "A run, a page of its inputs and outputs, its attempt chain",
			[]obj{jobParam, runParam, limitQuery, param("query", "offset", "integer", "items to skip")},
			answer("ok", ref("RunDetail")), errorsOf("400", "404", "503"))},
		"/api/v1/jobs/{job}/history": obj{"get": op("listHistory", "The job's bookmark versions (commits, resets, rewinds with who asked), newest first, paged",
			[]obj{jobParam, limitQuery, param("query", "before", "integer", "only versions below this")},
			answer("ok", ref("HistoryPage")), errorsOf("400", "404", "503"))},
		"/api/v1/jobs/{job}/plan": obj{"get": op("planJob", "plan --json from the job file the last run recorded", []obj{jobParam},
			answer("ok", ref("PlanResult")), errorsOf("404", "409", "503"))},
		"/api/v1/jobs/{job}/reset": obj{"post": func() obj {
			o := op("resetJob", "Reset or rewind the bookmark (dry_run: what would be undone and deleted); needs the token and the CSRF header",
				[]obj{jobParam, param("header", csrfHeader, "string", "the value of the tidemark_csrf cookie")},
				answer("the ResetPreview with dry_run, else the ResetResult", obj{"oneOf": []obj{ref("ResetPreview"), ref("ResetResult")}}),
				errorsOf("400", "403", "404", "409", "503"))
			o["requestBody"] = obj{"required": true, "content": jsonBody(ref("ResetRequest"))}
			o["security"] = []obj{{"bearer": []string{}}}
			return o
		}()},
		"/api/v1/openapi.json": obj{"get": op("openapi", "This document", nil, answer("ok", anyObj), errorsOf())},
	}
	return obj{
		"openapi": "3.0.3",
		"info": obj{"title": "tidemark serve", "version": "1",
			"description": "The jobs, runs, bookmarks and plans of one tidemark state store; the shapes are the CLI's --json shapes."},
		"paths": paths,
		"components": obj{"schemas": schemas,
			"securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer"}}},
	}
}

// openapi is GET /api/v1/openapi.json.
func (s *server) openapi(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, openAPIDoc())
}
