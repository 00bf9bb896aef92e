package gitrepo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/go-git/go-git/v6/plumbing/protocol/capability"
	"github.com/go-git/go-git/v6/plumbing/transport"
	"github.com/go-git/go-git/v6/storage"
)

// A large push over HTTP sends its request as a stream (docs/branch-worker.md#push).
// go-git's HTTP session writes the whole receive-pack request into a buffer grown by
// doubling before it sends it: for a first mirror of 100,000 objects, 120 MB live at once
// on top of everything else. go-git's SendPack takes any writer, so the operator posts the
// request itself, with a body read from a pipe as SendPack writes it.
//
// Where to post, and with which credentials, is what go-git decided for the discovery
// request of the same push: its redirect and credential rules stay go-git's. Every HTTP
// request of a repository goes through one client whose transport records the last
// successful receive-pack discovery: its URL after redirects and its Authorization header.

// httpSession is the HTTP client of one repository, shared with go-git.
type httpSession struct {
	client *http.Client
	// credentials: the repository has credentials configured (a post without them would
	// be refused where go-git's is not).
	credentials bool

	mu        sync.Mutex
	discovery *http.Request // the last receive-pack discovery answered 200, or nil
}

// newHTTPSession makes the client: Go's default transport (proxy from the environment),
// verifying the server with caBundle when given.
func newHTTPSession(caBundle []byte, credentials bool) (*httpSession, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("the CA bundle holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	s := &httpSession{credentials: credentials}
	s.client = &http.Client{Transport: &recordingTransport{next: tr, session: s}}
	return s, nil
}

// recordingTransport passes requests on and records a successful receive-pack discovery.
type recordingTransport struct {
	next    http.RoundTripper
	session *httpSession
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusOK && req.Method == http.MethodGet &&
		strings.HasSuffix(req.URL.Path, "/info/refs") && req.URL.Query().Get("service") == transport.ReceivePackService {
		t.session.mu.Lock()
		t.session.discovery = req
		t.session.mu.Unlock()
	}
	return resp, err
}

// receivePackEndpoint is where the last discovery says to post a push, and its
// Authorization header ("" for none); ok is false when no discovery was recorded.
func (s *httpSession) receivePackEndpoint() (endpoint *url.URL, authorization string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.discovery == nil {
		return nil, "", false
	}
	// As go-git joins its base: the path as it was spelled (%2F stays %2F), no userinfo.
	d := s.discovery.URL
	base, err := url.Parse(d.Scheme + "://" + d.Host + strings.TrimSuffix(d.EscapedPath(), "/info/refs"))
	if err != nil {
		return nil, "", false
	}
	return base.JoinPath(transport.ReceivePackService), s.discovery.Header.Get("Authorization"), true
}

// forgetDiscovery clears the record before a push's handshake, so that a push never posts
// where an earlier one was sent.
func (s *httpSession) forgetDiscovery() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discovery = nil
}

// streamPush sends req through go-git's SendPack with the request body streamed to the
// endpoint the push's discovery reached. A redirect of the post is refused, as go-git
// refuses it.
func (s *httpSession) streamPush(ctx context.Context, st storage.Storer, caps *capability.List, req *transport.PushRequest) error {
	endpoint, authorization, ok := s.receivePackEndpoint()
	if !ok || authorization == "" && s.credentials {
		// No discovery answered 200 to post after, or it went without the credentials
		// go-git would give the post (Go drops them on a redirect to another host).
		return errNotStreamable
	}
	body, w := io.Pipe()
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), body)
	if err != nil {
		return err
	}
	post.Header.Set("Content-Type", "application/x-"+transport.ReceivePackService+"-request")
	post.Header.Set("Accept", "application/x-"+transport.ReceivePackService+"-result")
	post.Header.Set("User-Agent", capability.DefaultAgent())
	if authorization != "" {
		post.Header.Set("Authorization", authorization)
	}
	client := *s.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	answer := &postAnswer{ready: make(chan struct{})}
	go func() {
		defer close(answer.ready)
		answer.resp, answer.err = client.Do(post)
		if answer.err == nil && answer.resp.StatusCode != http.StatusOK {
			answer.err = statusError(answer.resp.StatusCode)
			_ = answer.resp.Body.Close()
		}
		if answer.err != nil {
			_ = body.CloseWithError(answer.err) // SendPack's writes end with the answer's error
		}
	}()
	err = transport.SendPack(ctx, st, *caps, w, answer, req)
	if err != nil {
		_ = w.CloseWithError(err) // the post ends too, if its body was not all sent
	}
	<-answer.ready
	if answer.resp != nil {
		_ = answer.resp.Body.Close()
	}
	if answer.err != nil {
		return answer.err // what the server said outranks a write the answer cut short
	}
	return err
}

// postAnswer is the response of a streamed post, read once the request body is sent.
type postAnswer struct {
	ready chan struct{}
	resp  *http.Response
	err   error
}

func (a *postAnswer) Read(p []byte) (int, error) {
	<-a.ready
	if a.err != nil {
		return 0, a.err
	}
	return a.resp.Body.Read(p)
}

// Close does nothing: streamPush closes the response once the post has ended.
func (a *postAnswer) Close() error { return nil }

// errStreamRefused is a post the server refused for its form (400, 411), before any ref
// was looked at: a server that does not take a request without a length. The push is sent
// again as go-git sends it.
var errStreamRefused = errors.New("the server does not take a push request without a length")

// errNotStreamable: this push cannot be streamed as go-git would send it; go-git sends it.
var errNotStreamable = errors.New("push not streamable")

// statusError is a refused post as go-git names its kinds, so that the worker tells a
// credential problem from another; the message holds no URL.
func statusError(code int) error {
	switch code {
	case http.StatusBadRequest, http.StatusLengthRequired:
		return fmt.Errorf("push: the server answered %d %s: %w", code, http.StatusText(code), errStreamRefused)
	case http.StatusUnauthorized:
		return fmt.Errorf("push: %w", transport.ErrAuthenticationRequired)
	case http.StatusForbidden:
		return fmt.Errorf("push: %w", transport.ErrAuthorizationFailed)
	case http.StatusNotFound:
		return fmt.Errorf("push: %w", transport.ErrRepositoryNotFound)
	}
	return fmt.Errorf("push: the server answered %d %s", code, http.StatusText(code))
}
