package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"inflight/event"
	"inflight/termsafe"
	"inflight/urlhost"
)

// CheckCallback accepts only a plain-http loopback redirect URI with a
// port: the authorization pages ask native clients for loopback
// redirects, and inflight listens there itself.
func CheckCallback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--callback-url %q: %w", raw, err)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if u.Scheme != "http" || (host != "localhost" && (ip == nil || !ip.IsLoopback())) || u.Port() == "" {
		return fmt.Errorf("--callback-url %q: want http://127.0.0.1:PORT/PATH (a loopback address inflight listens on)", raw)
	}
	return nil
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// fetchCode is the browser step: listen on the callback, print the
// authorization URL and open it, and wait for the authorization server to
// send the browser back. The listener closes when it returns.
func (t *Transport) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if !t.cfg.Interactive {
		return nil, fmt.Errorf("%w: %s", ErrLoginNeeded, t.loginHint())
	}
	authURL, err := url.Parse(args.URL)
	if err != nil {
		return nil, err
	}
	if err := openable(authURL); err != nil {
		// Never handed to a browser opener (a file: URL to an executable
		// runs it on some systems): found in review.
		t.emit(ctx, event.AuthStep{Kind: event.AuthBrowser, Start: time.Now(), URL: stripQuery(authURL), Err: err.Error()})
		return nil, err
	}
	start := time.Now()
	cl, err := t.listenCallback(ctx, authURL.Query().Get("state"), start)
	if err != nil {
		return nil, err
	}
	defer cl.srv.Close()
	if waitBrowser := t.showAuthURL(ctx, args.URL, authURL, start); waitBrowser != nil {
		defer waitBrowser()
	}
	return t.awaitCallback(ctx, cl, start)
}

// callbackListener is the loopback server the authorization server sends
// the browser back to. The first callback that carries inflight's state
// ends the browser step.
type callbackListener struct {
	state   string
	results chan callbackResult
	ignored atomic.Int32 // callbacks without inflight's state
	srv     *http.Server
}

// listenCallback listens on the callback URL's host and serves its path.
func (t *Transport) listenCallback(ctx context.Context, state string, start time.Time) (*callbackListener, error) {
	cb, _ := url.Parse(t.cfg.CallbackURL)
	ln, err := net.Listen("tcp", cb.Host)
	if err != nil {
		err = fmt.Errorf("cannot listen for the callback on %s (%v): stop what listens there, or give another loopback port with --callback-url http://127.0.0.1:PORT/callback (a pre-registered client must allow that redirect URI)", cb.Host, err)
		t.emit(ctx, event.AuthStep{Kind: event.AuthBrowser, Start: start, URL: t.cfg.CallbackURL, Err: err.Error()})
		return nil, err
	}
	cl := &callbackListener{state: state, results: make(chan callbackResult, 1)}
	path := cb.Path
	if path == "" {
		path = "/"
	}
	mux := http.NewServeMux()
	mux.HandleFunc(path, cl.callback)
	cl.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go cl.srv.Serve(ln)
	return cl, nil
}

func (cl *callbackListener) deliver(r callbackResult) {
	select {
	case cl.results <- r:
	default:
	}
}

// callback answers the browser sent back with a page and hands what it
// carries (the code, or the authorization server's refusal) to the
// browser step.
func (cl *callbackListener) callback(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The state first, compared in constant time: a callback without
	// inflight's state (a forged redirect, a stale tab) is refused and
	// changes nothing — it neither ends nor fails the login. Found in
	// review.
	if subtle.ConstantTimeCompare([]byte(p.Get("state")), []byte(cl.state)) != 1 {
		cl.ignored.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		page(w, "State mismatch", "This callback does not carry the state inflight sent; it was ignored.")
		return
	}
	switch {
	case p.Get("error") != "":
		msg := oauthError(p.Get("error"), p.Get("error_description"), "")
		w.WriteHeader(http.StatusBadRequest)
		page(w, "Authorization refused", "The authorization server said: "+msg+". Return to inflight.")
		cl.deliver(callbackResult{err: fmt.Errorf("the authorization server refused the authorization: %s%s", msg, redirectHint(msg))})
	case p.Get("code") == "":
		w.WriteHeader(http.StatusBadRequest)
		page(w, "No code", "The callback carries no authorization code.")
		cl.deliver(callbackResult{err: errors.New("the callback carried no authorization code")})
	default:
		page(w, "Authorized", "inflight has the authorization; you can close this tab.")
		cl.deliver(callbackResult{res: &auth.AuthorizationResult{Code: p.Get("code"), State: p.Get("state"), Iss: p.Get("iss")}})
	}
}

// showAuthURL prints the authorization URL raw (authURL parsed) on the
// prompt and opens it in a browser (unless NoBrowser), and says which it
// did. waitBrowser, when not nil, waits a moment for a browser command
// inflight started to exit.
func (t *Transport) showAuthURL(ctx context.Context, raw string, authURL *url.URL, start time.Time) (waitBrowser func()) {
	how := "printed"
	// The host the URL really leads to, on its own line: a URL can put a
	// trusted name before an @, or spell a host with look-alike letters.
	host := urlhost.Of(raw)
	hostLine := "host  " + host.Name
	if note := host.Note(); note != "" {
		hostLine += " (" + note + ")"
	}
	if t.cfg.Prompt != nil {
		// Server text, made inert before the terminal sees it.
		fmt.Fprintf(t.cfg.Prompt, "To authorize inflight for %s, open this URL in a browser:\n\n  %s\n  %s\n\nWaiting for the callback on %s …\n",
			termsafe.Line(ServerKey(t.cfg.Server)), termsafe.Line(hostLine), termsafe.Line(raw), termsafe.Line(t.cfg.CallbackURL))
	}
	var openErr error
	if !t.cfg.NoBrowser {
		if open := t.cfg.OpenBrowser; open != nil {
			openErr = open(ctx, raw)
		} else {
			var exited <-chan struct{}
			exited, openErr = openBrowser(raw)
			if openErr == nil {
				// A scripted browser (curl, a test's) is done once the
				// callback came; give it a moment to exit, never more.
				waitBrowser = func() {
					select {
					case <-exited:
					case <-time.After(2 * time.Second):
					}
				}
			}
		}
		if openErr == nil {
			how = "opened in the browser"
		}
	}
	q := authURL.Query()
	step := event.AuthStep{Kind: event.AuthBrowser, Method: http.MethodGet, URL: stripQuery(authURL), Start: start,
		Scopes: strings.Fields(q.Get("scope")), ClientID: q.Get("client_id"),
		Text: "authorization URL " + how + ": " + raw + "; " + hostLine + "; waiting for the callback on " + t.cfg.CallbackURL}
	if openErr != nil {
		step.Err = "could not open a browser (" + openErr.Error() + "): open the URL yourself"
		if t.cfg.Prompt != nil {
			fmt.Fprintf(t.cfg.Prompt, "(could not open a browser: %v)\n", openErr)
		}
	}
	t.emit(ctx, step)
	return waitBrowser
}

// awaitCallback waits for cl's callback, at most BrowserTimeout, or ctx's
// end.
func (t *Transport) awaitCallback(ctx context.Context, cl *callbackListener, start time.Time) (*auth.AuthorizationResult, error) {
	timer := time.NewTimer(t.cfg.BrowserTimeout)
	defer timer.Stop()
	done := event.AuthStep{Kind: event.AuthBrowser, URL: t.cfg.CallbackURL, Start: start}
	select {
	case r := <-cl.results:
		done.Duration = time.Since(start)
		if r.err != nil {
			done.Err = r.err.Error()
			t.emit(ctx, done)
			return nil, r.err
		}
		done.Text = "callback received"
		t.emit(ctx, done)
		return r.res, nil
	case <-timer.C:
		stateNote := ""
		if n := cl.ignored.Load(); n > 0 {
			stateNote = fmt.Sprintf("; %d callback(s) without the state inflight sent were ignored (a stale tab or a forged redirect: state mismatch)", n)
		}
		err := fmt.Errorf("the browser step timed out: no callback on %s within %v%s; log in again (`inflight auth login %s`)%s",
			t.cfg.CallbackURL, t.cfg.BrowserTimeout, stateNote, ServerKey(t.cfg.Server), t.timeoutHint())
		done.Duration, done.Err = time.Since(start), err.Error()
		t.emit(ctx, done)
		return nil, err
	case <-ctx.Done():
		done.Duration, done.Err = time.Since(start), "cancelled while waiting for the callback"
		t.emit(ctx, done)
		return nil, ctx.Err()
	}
}

// timeoutHint: with a pre-registered client, the usual reason no callback
// comes is a redirect URI the authorization server does not know, which it
// shows in the browser, not to inflight.
func (t *Transport) timeoutHint() string {
	if t.preClientID == "" {
		return ""
	}
	return fmt.Sprintf("; if the browser showed a redirect_uri error, the client %s is registered with another redirect URI than %s (localhost and 127.0.0.1 differ, and so do ports): give the registered one with --callback-url",
		t.preClientID, t.cfg.CallbackURL)
}

// redirectHint adds what to do about a refused redirect URI, the usual
// localhost-against-127.0.0.1 mismatch among them.
func redirectHint(msg string) string {
	if !strings.Contains(strings.ToLower(msg), "redirect") {
		return ""
	}
	return " (the redirect URI must match the registered one exactly: localhost and 127.0.0.1 differ, and so do ports; give the registered one with --callback-url)"
}

func page(w http.ResponseWriter, title, text string) {
	fmt.Fprintf(w, "<!doctype html><title>inflight: %s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// OpenBrowser opens url as command-line tools do: each command of
// $BROWSER (colon-separated; %s is replaced by the URL, else the URL is
// appended) until one starts, else the platform's opener. It does not wait
// for the browser.
func OpenBrowser(ctx context.Context, u string) error {
	_, err := openBrowser(u)
	return err
}

// openBrowser is OpenBrowser; the channel is closed when the opener exits.
func openBrowser(u string) (<-chan struct{}, error) {
	if b := os.Getenv("BROWSER"); b != "" {
		var errs []error
		for _, entry := range strings.Split(b, string(os.PathListSeparator)) {
			fields := strings.Fields(entry)
			if len(fields) == 0 {
				continue
			}
			subst := false
			for i, f := range fields {
				if strings.Contains(f, "%s") {
					fields[i], subst = strings.ReplaceAll(f, "%s", u), true
				}
			}
			if !subst {
				fields = append(fields, u)
			}
			exited, err := start(fields[0], fields[1:]...)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			return exited, nil
		}
		return nil, fmt.Errorf("$BROWSER: %w", errors.Join(errs...))
	}
	switch runtime.GOOS {
	case "darwin":
		return start("open", u)
	case "windows":
		return start("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		return start("xdg-open", u)
	}
}

func start(name string, args ...string) (<-chan struct{}, error) {
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // reaped; the caller waits for it a moment at most
		close(exited)
	}()
	return exited, nil
}

// openable reports an authorization URL inflight may open in a browser:
// https, or http to a loopback host (a local authorization server).
// Anything else — file:, a custom scheme — comes from a server and is
// refused: the URL could name something a browser opener runs.
func openable(u *url.URL) error {
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("the authorization URL %q is neither https nor http to a loopback host: inflight opens no such URL", termsafe.Line(stripQuery(u)))
}
