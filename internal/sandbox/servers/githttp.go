package servers

import (
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPAuth is what the HTTP front end demands. With neither set, anyone may read and push.
type HTTPAuth struct {
	// Username and Password, when set, are accepted as basic auth.
	Username, Password string
	// BearerToken, when set, is accepted as "Authorization: Bearer <token>".
	BearerToken string
}

// HTTPFrontend serves a GitServer's repositories over smart HTTP through git http-backend.
type HTTPFrontend struct {
	server *GitServer
	auth   HTTPAuth
	base   string
	srv    *http.Server
	down   atomic.Bool
	// requests counts every request that reached the front end, refused or not.
	requests atomic.Int64
	// passwords, when set, replaces auth.Password: the passwords accepted for auth.Username.
	passwords atomic.Pointer[[]string]
	// refuseEvery makes every Nth push fail (0: none); pushAttempts counts the pushes that
	// passed authentication, refused the ones failed on purpose.
	refuseEvery  atomic.Int64
	pushAttempts atomic.Int64
	refused      atomic.Int64
	// streamedPushes counts the pushes whose request came without a length (chunked);
	// refuseStreamed answers them 400, as a server that takes none.
	streamedPushes atomic.Int64
	refuseStreamed atomic.Bool

	served    chan struct{} // closed when Serve has returned
	serveErr  error         // why Serve returned, unless closed; read after served
	closeOnce sync.Once
}

// StartHTTP starts a smart HTTP front end on a loopback port. Stop it with Close.
func (g *GitServer) StartHTTP(auth HTTPAuth) (*HTTPFrontend, error) {
	return g.startHTTP(auth, nil)
}

// StartHTTPS starts the front end over TLS with the server certificate and key (PEM), as a
// private Git server whose CA the client must be given.
func (g *GitServer) StartHTTPS(auth HTTPAuth, certPEM, keyPEM []byte) (*HTTPFrontend, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("git https front end: %w", err)
	}
	return g.startHTTP(auth, &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
}

func (g *GitServer) startHTTP(auth HTTPAuth, tlsCfg *tls.Config) (*HTTPFrontend, error) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git http front end: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("git http front end: %w", err)
	}
	scheme := "http://"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https://"
	}
	f := &HTTPFrontend{server: g, auth: auth, base: scheme + ln.Addr().String(), served: make(chan struct{})}
	backend := &cgi.Handler{
		Path:       gitPath,
		Args:       []string{"http-backend"},
		Env:        []string{"GIT_PROJECT_ROOT=" + g.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
		InheritEnv: []string{"PATH"},
	}
	f.srv = &http.Server{Handler: f.handler(backend)}
	go func() {
		defer close(f.served)
		if err := f.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.serveErr = err
		}
	}()
	return f, nil
}

// Close stops the front end: it stops listening, lets requests in flight (and their git
// http-backend processes) finish for up to 5 seconds, then closes every connection. It
// reports an error the server stopped with on its own, if any.
func (f *HTTPFrontend) Close() error {
	f.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			_ = f.srv.Close()
		}
		<-f.served
	})
	if f.serveErr != nil {
		return fmt.Errorf("git http front end: %w", f.serveErr)
	}
	return nil
}

// URL returns the clone URL of a repository, without credentials.
func (f *HTTPFrontend) URL(repo string) string {
	return f.base + "/" + strings.TrimPrefix(repo, "/")
}

// Requests returns how many requests reached the front end, including refused ones.
func (f *HTTPFrontend) Requests() int { return int(f.requests.Load()) }

// SetDown makes the front end answer 503 to every request (down=true) or serve again.
func (f *HTTPFrontend) SetDown(down bool) { f.down.Store(down) }

// SetPasswords replaces the passwords accepted for HTTPAuth.Username (HTTPAuth.Password until
// the first call). Several are accepted at once, as a Git host lets an old token work for a
// while after a new one was issued: a rotation moves the set along, dropping the oldest.
func (f *HTTPFrontend) SetPasswords(passwords ...string) {
	set := append([]string(nil), passwords...)
	f.passwords.Store(&set)
}

// RefusePushes makes every Nth push (receive-pack request) fail with 500 before Git sees it,
// so nothing of it lands; 0 refuses none. The count runs on from earlier pushes.
func (f *HTTPFrontend) RefusePushes(every int) { f.refuseEvery.Store(int64(every)) }

// withLength reads a request body sent without a length (chunked) and gives the request
// that length: Go's CGI host refuses chunked bodies, which Git hosts in front of
// git http-backend accept (the git CLI sends a large push that way).
func withLength(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength, r.TransferEncoding = int64(len(body)), nil
	return nil
}

// RefuseStreamedPushes makes the front end answer 400 to a push sent without a length.
func (f *HTTPFrontend) RefuseStreamedPushes(refuse bool) { f.refuseStreamed.Store(refuse) }

// StreamedPushes returns how many pushes sent their request without a length, as a stream.
func (f *HTTPFrontend) StreamedPushes() int { return int(f.streamedPushes.Load()) }

// RefusedPushes returns how many pushes RefusePushes failed.
func (f *HTTPFrontend) RefusedPushes() int { return int(f.refused.Load()) }

func (f *HTTPFrontend) handler(backend http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if f.down.Load() {
			http.Error(w, "git server unavailable", http.StatusServiceUnavailable)
			return
		}
		if !f.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			n := f.pushAttempts.Add(1)
			if r.ContentLength < 0 {
				f.streamedPushes.Add(1)
				if f.refuseStreamed.Load() {
					http.Error(w, "chunked request bodies are not supported", http.StatusBadRequest)
					return
				}
				if err := withLength(r); err != nil {
					http.Error(w, "read the push: "+err.Error(), http.StatusBadRequest)
					return
				}
			}
			if every := f.refuseEvery.Load(); every > 0 && n%every == 0 {
				f.refused.Add(1)
				http.Error(w, "push refused (a failure the test asked for)", http.StatusInternalServerError)
				return
			}
			f.server.countPush(strings.TrimSuffix(r.URL.Path, "/git-receive-pack"))
		}
		backend.ServeHTTP(w, r)
	})
}

func (f *HTTPFrontend) authorized(r *http.Request) bool {
	if f.auth.Username == "" && f.auth.BearerToken == "" {
		return true
	}
	if f.auth.Username != "" {
		if user, pass, ok := r.BasicAuth(); ok && equal(user, f.auth.Username) && f.passwordAccepted(pass) {
			return true
		}
	}
	if f.auth.BearerToken != "" {
		if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(token, f.auth.BearerToken) {
			return true
		}
	}
	return false
}

func (f *HTTPFrontend) passwordAccepted(pass string) bool {
	accepted := []string{f.auth.Password}
	if set := f.passwords.Load(); set != nil {
		accepted = *set
	}
	ok := false
	for _, p := range accepted {
		// Every candidate is compared, so the time taken does not tell which one matched.
		ok = equal(pass, p) || ok
	}
	return ok
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
