// The Go net/http server of the interop matrix (tests/interop/servers/go_server.py).
//
// One process, two ports: a cleartext one answering HTTP/1.1 and HTTP/2 with prior
// knowledge (golang.org/x/net/http2/h2c), and a TLS one answering HTTP/1.1 and HTTP/2
// chosen by ALPN. Both serve /static/ from -root and the httpbin subset of
// tests/interop/servers/base.py under /app/ (and under / too, so the web servers of the
// matrix can proxy /app/ here with the prefix stripped).
package main

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"log"
	"math/rand"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

// maxDelay bounds /delay/<s> as httpbin does (seconds).
const maxDelay = 10

// maxBytes bounds /bytes/<n> as httpbin does (100 KiB).
const maxBytes = 100 * 1024

// maxUpload bounds a request body the echo reads (the matrix sends 10 MiB at most).
const maxUpload = 64 << 20

type connKey struct{}

func main() {
	root := flag.String("root", "", "site root (holds static/)")
	plain := flag.Int("plain", 0, "cleartext port (h1 + h2c)")
	tlsPort := flag.Int("tls", 0, "TLS port (h1 + h2 by ALPN)")
	cert := flag.String("cert", "", "certificate PEM")
	key := flag.String("key", "", "key PEM")
	idle := flag.Duration("idle", 2*time.Second, "idle timeout of kept-alive connections")
	recycle := flag.Int64("recycle", 0, "close a connection after this many requests (0: never)")
	flag.Parse()

	mux := http.NewServeMux()
	mux.Handle("/static/", http.StripPrefix("/static/", http.FileServer(http.Dir(*root+"/static"))))
	app := appHandler()
	mux.Handle("/app/", http.StripPrefix("/app", app))
	mux.Handle("/", app)
	handler := recycling(mux, *recycle)

	// Per-connection request counter for recycling: a handler answering with
	// "Connection: close" makes net/http close an HTTP/1.1 connection and send GOAWAY on
	// an HTTP/2 one (its documented meaning for h2).
	connContext := func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(atomic.Int64))
	}
	errs := make(chan error, 2)
	if *plain != 0 {
		srv := &http.Server{
			Addr:        "127.0.0.1:" + strconv.Itoa(*plain),
			Handler:     h2c.NewHandler(handler, &http2.Server{IdleTimeout: *idle}),
			IdleTimeout: *idle,
			ConnContext: connContext,
		}
		go func() { errs <- srv.ListenAndServe() }()
	}
	if *tlsPort != 0 {
		srv := &http.Server{
			Addr:        "127.0.0.1:" + strconv.Itoa(*tlsPort),
			Handler:     handler,
			IdleTimeout: *idle,
			ConnContext: connContext,
			TLSConfig:   &tls.Config{NextProtos: []string{"h2", "http/1.1"}},
		}
		if err := http2.ConfigureServer(srv, &http2.Server{IdleTimeout: *idle}); err != nil {
			log.Fatal(err)
		}
		go func() { errs <- srv.ListenAndServeTLS(*cert, *key) }()
	}
	log.Fatal(<-errs)
}

func recycling(next http.Handler, after int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if counter, ok := r.Context().Value(connKey{}).(*atomic.Int64); ok && after > 0 {
			if counter.Add(1) >= after {
				w.Header().Set("Connection", "close")
			}
		}
		next.ServeHTTP(w, r)
	})
}

func appHandler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("/anything", anything)
	m.HandleFunc("/anything/", anything)
	m.HandleFunc("/redirect-to", func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusFound
		if s := r.URL.Query().Get("status_code"); s != "" {
			code, _ = strconv.Atoi(s)
		}
		w.Header().Set("Location", r.URL.Query().Get("url"))
		w.WriteHeader(code)
	})
	m.HandleFunc("/cookies/set", func(w http.ResponseWriter, r *http.Request) {
		for k, v := range r.URL.Query() {
			http.SetCookie(w, &http.Cookie{Name: k, Value: v[0], Path: "/"})
		}
		w.Header().Set("Location", "/cookies")
		w.WriteHeader(http.StatusFound)
	})
	m.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		jar := map[string]string{}
		for _, c := range r.Cookies() {
			jar[c.Name] = c.Value
		}
		writeJSON(w, map[string]any{"cookies": jar})
	})
	m.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		if err != nil {
			http.Error(w, "bad status", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
	})
	m.HandleFunc("/delay/", func(w http.ResponseWriter, r *http.Request) {
		s, _ := strconv.ParseFloat(strings.TrimPrefix(r.URL.Path, "/delay/"), 64)
		if s > maxDelay {
			s = maxDelay
		}
		select {
		case <-time.After(time.Duration(s * float64(time.Second))):
		case <-r.Context().Done():
			return
		}
		writeJSON(w, echo(r, nil))
	})
	m.HandleFunc("/stream/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/stream/"))
		w.Header().Set("Content-Type", "application/json")
		flusher, _ := w.(http.Flusher)
		for i := 0; i < n && i < 100; i++ {
			line := echo(r, nil)
			line["id"] = i
			b, _ := json.Marshal(line)
			w.Write(append(b, '\n'))
			if flusher != nil {
				flusher.Flush()
			}
		}
	})
	m.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		body := echo(r, nil)
		body["gzipped"] = true
		b, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		gz.Write(b)
		gz.Close()
	})
	m.HandleFunc("/etag/", func(w http.ResponseWriter, r *http.Request) {
		etag := strings.TrimPrefix(r.URL.Path, "/etag/")
		for _, v := range strings.Split(r.Header.Get("If-None-Match"), ",") {
			v = strings.TrimSpace(v)
			if v == `"`+etag+`"` || v == etag || v == "*" {
				w.Header().Set("ETag", `"`+etag+`"`)
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("ETag", `"`+etag+`"`)
		writeJSON(w, echo(r, nil))
	})
	m.HandleFunc("/bytes/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/bytes/"))
		if n > maxBytes {
			n = maxBytes
		}
		seed, _ := strconv.ParseInt(r.URL.Query().Get("seed"), 10, 64)
		b := make([]byte, n)
		rand.New(rand.NewSource(seed)).Read(b)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
	return m
}

// echo is httpbin's request description (/get, /anything) without a body.
func echo(r *http.Request, extra map[string]any) map[string]any {
	args := map[string]any{}
	for k, v := range r.URL.Query() {
		args[k] = one(v)
	}
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[k] = strings.Join(v, ",")
	}
	headers["Host"] = r.Host
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	out := map[string]any{
		"args":    args,
		"headers": headers,
		"origin":  strings.Split(r.RemoteAddr, ":")[0],
		"url":     scheme + "://" + r.Host + r.URL.RequestURI(),
		"method":  r.Method,
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func one(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	return v
}

func text(b []byte, ctype string) string {
	if utf8.Valid(b) {
		return string(b)
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	return "data:" + ctype + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// anything echoes the request as httpbin's /anything does: form fields, files, JSON and
// the raw body ("data").
func anything(w http.ResponseWriter, r *http.Request) {
	form := map[string]any{}
	files := map[string]any{}
	data := ""
	var parsed any
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ctype {
	case "multipart/form-data":
		if err := r.ParseMultipartForm(maxUpload); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for k, v := range r.MultipartForm.Value {
			form[k] = one(v)
		}
		for k, fhs := range r.MultipartForm.File {
			f, err := fhs[0].Open()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			files[k] = text(b, fhs[0].Header.Get("Content-Type"))
		}
	case "application/x-www-form-urlencoded":
		body, err := io.ReadAll(io.LimitReader(r.Body, maxUpload))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		values, _ := url.ParseQuery(string(body))
		for k, v := range values {
			form[k] = one(v)
		}
	default:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxUpload))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data = text(body, r.Header.Get("Content-Type"))
		if json.Unmarshal(body, &parsed) != nil {
			parsed = nil
		}
	}
	writeJSON(w, echo(r, map[string]any{"form": form, "files": files, "data": data, "json": parsed}))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.Write(append(b, '\n'))
}
