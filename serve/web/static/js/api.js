// api.js: the JSON API under /api/v1/ (the only thing the pages read), the
// token the user typed (sessionStorage) and the CSRF header from the cookie.
"use strict";
(function (TM) {
  var base = "api/v1";
  var tokenKey = "tidemark.token";

  // ApiError is an answer that is not 2xx, or no answer at all (status 0).
  function ApiError(status, message, path) {
    this.status = status; this.message = message; this.path = path;
  }
  ApiError.prototype.toString = function () { return this.message; };

  // explain turns an error into one sentence for the page.
  function explain(status, msg, path) {
    var detail = msg ? ": " + msg : "";
    switch (status) {
      case 0: return "The tidemark server cannot be reached (is `tidemark serve` still running?)" + detail;
      case 503: return "The state store is unavailable right now (locked by a run, or unreachable); try again in a moment" + detail;
      case 404: return "Not found" + detail;
      case 401: case 403: return "Not allowed: the token is missing or wrong, or the request was refused" + detail;
      case 409: return "Cannot do this now" + detail;
      default: return "The server answered " + status + " for " + path + detail;
    }
  }

  function cookie(name) {
    var parts = document.cookie ? document.cookie.split(";") : [];
    for (var i = 0; i < parts.length; i++) {
      var p = parts[i].trim(), eq = p.indexOf("=");
      if (eq > 0 && p.slice(0, eq) === name) return decodeURIComponent(p.slice(eq + 1));
    }
    return "";
  }

  function request(method, path, body) {
    var headers = { "Accept": "application/json" };
    var init = { method: method, headers: headers, credentials: "same-origin", cache: "no-store" };
    // The token goes with reads too: a server started with --read-token
    // answers them only with it.
    var t = TM.api.token();
    if (t) headers["Authorization"] = "Bearer " + t;
    if (method !== "GET") {
      headers["Content-Type"] = "application/json";
      headers["X-Tidemark-CSRF"] = cookie("tidemark_csrf");
      init.body = JSON.stringify(body || {});
    }
    return fetch(base + path, init).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!res.ok) {
          var msg = data && typeof data.error === "string" ? data.error : "";
          throw new ApiError(res.status, explain(res.status, msg, path), path);
        }
        if (data === null) throw new ApiError(res.status, "The server's answer for " + path + " is not JSON", path);
        return data;
      });
    }, function (err) {
      throw new ApiError(0, explain(0, String(err && err.message || err), path), path);
    });
  }

  TM.ApiError = ApiError;
  TM.api = {
    get: function (path) { return request("GET", path); },
    post: function (path, body) { return request("POST", path, body); },
    job: function (job) { return "/jobs/" + encodeURIComponent(job); },
    token: function () { try { return sessionStorage.getItem(tokenKey) || ""; } catch (e) { return ""; } },
    setToken: function (t) { try { if (t) sessionStorage.setItem(tokenKey, t); else sessionStorage.removeItem(tokenKey); } catch (e) { /* storage off */ } },
    // session is GET /api/v1/session, cached for the page's life; it sets the CSRF cookie.
    session: function () {
      if (!TM.api._session) {
        TM.api._session = request("GET", "/session").catch(function () { return { actions: false }; });
      }
      return TM.api._session;
    }
  };

  // showError puts an error's sentence in place of a page or a section.
  TM.showError = function (into, err) {
    var status = err instanceof ApiError ? err.status : null;
    var text = err instanceof ApiError ? err.message : "Something went wrong showing this page: " + String(err && err.message || err);
    TM.clear(into).appendChild(TM.message("error", text, status));
  };
})(window.TM);
