package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
)

// A running proxy listens on a Unix socket, NAME.sock, in a directory of
// the user's alone, and streams what it records to whoever connects
// (`inflight attach`): first a Hello line, then the trace's recent lines
// (up to historyBytes: a viewer that attaches late still sees the
// requests in flight begin), then its lines as the recorder writes them.
// A viewer that cannot keep up is disconnected, never waited for; a proxy
// with no one attached records all the same. The history is shared: every
// viewer is handed the same bytes, never a copy of its own, so a viewer
// costs the proxy little whatever the history holds; at most maxViewers
// are attached at once, and one that does not read is dropped (and the
// proxy says so on its stderr).
// A viewer may write commands on its connection (act_command.go), read a
// line at a time per viewer; each is answered on that connection alone,
// between two of the stream's lines.

// Hello is the first line a proxy's socket sends: which proxy this is.
type Hello struct {
	// Stream names what follows the hello: "trace" (the trace format's
	// lines, as --trace writes them).
	Stream  string    `json:"stream"`
	Proxy   string    `json:"proxy"`
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	// Transport is the host's transport to the proxy: "stdio" (Run) or
	// "http" (RunHTTP). Absent from an older proxy's hello.
	Transport string `json:"transport,omitempty"`
	// LateWindow is how long the proxy's tracker watches for late traffic
	// after a host's cancel (--late-window): a viewer that judges the
	// stream again must watch as long.
	LateWindow Duration `json:"lateWindow,omitempty"`
	// HistoryCut: the recent lines that follow do not reach back to the
	// trace's start (the history keeps historyBytes): requests they name
	// may have begun before them.
	HistoryCut bool `json:"historyCut,omitempty"`
	// Acts: the proxy takes commands on this socket (act_command.go): a
	// viewer may act on the host's requests. Absent when it is read-only
	// or cannot act.
	Acts bool `json:"acts,omitempty"`
	// Refused, on a viewer the proxy does not take, says why (maxViewers
	// are attached already); nothing follows it.
	Refused string `json:"refused,omitempty"`
}

// Duration is a time.Duration written as its text ("5s").
type Duration time.Duration

// MarshalText writes d as time.Duration's String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// lateWindowOf is the late window a tracker of cfg watches for.
func lateWindowOf(cfg session.Config) time.Duration {
	if cfg.LateWindow > 0 {
		return cfg.LateWindow
	}
	return session.DefaultLateWindow
}

// ReadHello reads a proxy's Hello, the first line of its stream.
func ReadHello(r *bufio.Reader) (Hello, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return Hello{}, fmt.Errorf("read the proxy's hello: %w", err)
	}
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil {
		return Hello{}, fmt.Errorf("the proxy's hello: %w", err)
	}
	if h.Refused != "" {
		return h, fmt.Errorf("proxy %s refused to attach: %s", termsafe.Line(h.Proxy), termsafe.Line(h.Refused))
	}
	return h, nil
}

// Running is a proxy found in the socket directory.
type Running struct {
	Hello
	// Path is its socket.
	Path string
	// Stale: the socket is there but nothing answers on it (its proxy
	// crashed); the next proxy of that name replaces it.
	Stale bool
	// Trace is where the proxy records its trace, as its NAME.trace says
	// ("": it records none); the file may be gone since.
	Trace string
	// Ended: the proxy's socket is gone (the proxy has ended) and it left
	// where its trace is (Trace). Path is then "" and Hello has only the
	// name.
	Ended bool
}

// SocketDir is where proxies put their sockets: $XDG_RUNTIME_DIR/inflight
// (a per-user tmpfs), else inflight/run under the user's cache directory,
// else inflight-UID in the temporary directory.
func SocketDir() string {
	if base := os.Getenv("XDG_RUNTIME_DIR"); base != "" {
		return filepath.Join(base, "inflight")
	}
	if cache, err := os.UserCacheDir(); err == nil {
		return filepath.Join(cache, "inflight", "run")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("inflight-%d", os.Getuid()))
}

// validName is what a proxy's name may be: it becomes a file name.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName reports whether name can name a proxy (and its socket).
func ValidName(name string) bool { return validName.MatchString(name) }

// CleanName makes a name (a command's base name) fit for a socket.
func CleanName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	s = strings.TrimLeft(string(b), ".-_")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "server"
	}
	return s
}

// privateDir makes dir (mode 0700) if it is missing and refuses it unless
// it is a real directory, the user's own, that no one else may enter: a
// socket there is reachable by the user alone.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	return checkPrivateDir(dir)
}

// checkPrivateDir refuses dir, which is there, unless it is a real
// directory, the user's own, that no one else may enter (privateDir
// without making it: what reads the directory checks it as what writes
// there does).
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	switch uid, known := ownerOf(fi); {
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory (a symlink?): refusing it", dir)
	case known && uid != os.Getuid():
		return fmt.Errorf("socket directory %s belongs to user %d, not you: refusing it", dir, uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("socket directory %s is open to other users (mode %04o): refusing it; chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// listen opens NAME.sock in dir. A socket left by a proxy that crashed
// (nothing answers on it) is removed and replaced; a path that is not a
// socket (a file, a symlink) is refused, never followed or removed; a
// live proxy of that name is refused.
func listen(dir, name string) (*net.UnixListener, string, error) {
	if !validName.MatchString(name) {
		return nil, "", fmt.Errorf("proxy name %q: use letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	if err := privateDir(dir); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, name+".sock")
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, "", fmt.Errorf("%s exists and is not a socket: refusing to replace it", path)
		}
		if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
			c.Close()
			return nil, "", fmt.Errorf("a proxy named %q is already running (%s): give this one another --name", name, path)
		}
		// Stale. The directory is the user's alone, so nothing can swap
		// the path between the look and the removal; Remove unlinks the
		// path itself, never what it might name.
		if err := os.Remove(path); err != nil {
			return nil, "", fmt.Errorf("remove the stale socket %s: %w", path, err)
		}
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, "", fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, "", fmt.Errorf("socket %s: %w", path, err)
	}
	return l, path, nil
}

// List finds the proxies with a socket in dir, live or stale, and those
// that have ended leaving where their trace is, by name.
func List(dir string) ([]Running, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkPrivateDir(dir); err != nil {
		return nil, fmt.Errorf("%w (%w)", err, ErrUntrusted)
	}
	var out []Running
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sock")
		if !ok || e.Type()&os.ModeSocket == 0 {
			continue
		}
		r := Running{Hello: Hello{Proxy: name}, Path: filepath.Join(dir, e.Name())}
		h, err := hello(r.Path)
		if err != nil {
			r.Stale = true
		} else {
			r.Hello = h
		}
		out = append(out, r)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), traceSuffix)
		if !ok || !validName.MatchString(name) {
			continue
		}
		path, err := RecordedTrace(dir, name)
		if err != nil {
			continue // attach NAME says what is wrong with it
		}
		i := slices.IndexFunc(out, func(r Running) bool { return r.Proxy == name })
		if i >= 0 {
			out[i].Trace = path
			continue
		}
		out = append(out, Running{Hello: Hello{Proxy: name}, Trace: path, Ended: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Proxy < out[j].Proxy })
	return out, nil
}

// hello connects to a proxy's socket and reads its Hello.
func hello(path string) (Hello, error) {
	c, err := net.DialTimeout("unix", path, 200*time.Millisecond)
	if err != nil {
		return Hello{}, err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return Hello{}, err
	}
	var h Hello
	return h, json.Unmarshal(line, &h)
}

// ErrUntrusted is wrapped by what Attach and List return when the socket
// directory, or the socket, is not the user's alone: another user could
// have planted a socket there that speaks as a proxy.
var ErrUntrusted = errors.New("not trusted")

// Attach connects to the proxy named name in dir; the stream starts with
// its Hello line. As the proxy refuses to listen in a directory that is
// not the user's alone, Attach refuses to dial into one (or a socket
// another user owns), wrapping ErrUntrusted.
func Attach(dir, name string) (net.Conn, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("proxy name %q: no such proxy", name)
	}
	path := filepath.Join(dir, name+".sock")
	if err := checkSocket(dir, path); err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return nil, fmt.Errorf("no proxy named %q is running (%s): %w", name, path, err)
	}
	return c, nil
}

// viewerChunks bounds what waits for one viewer besides the history:
// chunks of the trace writer's buffer (at most 64 KiB each), which are the
// history's own bytes, shared by every viewer.
const viewerChunks = 64

// historyBytes bounds the trace kept for viewers that attach later.
const historyBytes = 4 << 20

// historyChunk is the size of the history's pieces: what is written is
// appended to the last one, and a full one is never written again, so that
// viewers can share them.
const historyChunk = 64 << 10

// maxViewers bounds the viewers attached at once: the next one is refused
// with a hello that says why (Hello.Refused).
const maxViewers = 32

// noReadTimeout is how long a write to a viewer may wait for it to read:
// one that reads nothing for that long is dropped.
const noReadTimeout = 5 * time.Second

// broadcast is the socket's side: it accepts viewers and hands each a copy
// of what the trace writer writes, dropping (disconnecting) any that
// falls viewerChunks behind.
type broadcast struct {
	l *net.UnixListener
	// hello is the Hello line (of h); cutHello the same with HistoryCut,
	// for viewers that come once the history was cut.
	h               Hello
	hello, cutHello []byte
	cut             bool
	mu              sync.Mutex
	subs            map[*viewer]struct{}
	// history is the stream's latest bytes, starting at a line's start,
	// at most limit (historyBytes) of them, in pieces shared with viewers:
	// the bytes within a piece's length never change once written.
	history [][]byte
	size    int // len of all the pieces
	limit   int
	// accepted and refused count the viewers taken and turned away.
	accepted, refused int
	lastRefusalSaid   time.Time
	// noReadTimeout is how long a write to a viewer may wait
	// (noReadTimeout; tests shorten it).
	noReadTimeout time.Duration
	// stderr and name are where and as whom the socket says what it
	// did to a viewer, as the proxy's other lines (recorder.say).
	stderr io.Writer
	name   string
	wg     sync.WaitGroup
	// mid: the stream's last write did not end a line, so a reply waits
	// (viewer.replies) for the end of that line.
	mid bool
	// act carries out the viewers' commands; nil refuses them, saying
	// refuse (takeCommands). red masks the replies' secrets.
	act    actor
	refuse string
	red    *redact.Redactor
	start  time.Time
	// decided is closed once takeCommands ran: the first viewer waits for
	// it a moment (decideWait), so that its hello says whether the proxy
	// acts even when it connects the instant the socket opens (the HTTP
	// proxy's own view does).
	decided     chan struct{}
	decideOnce  sync.Once
	decidedSeen bool
}

// decideWait bounds the first viewer's wait for takeCommands.
const decideWait = 200 * time.Millisecond

type viewer struct {
	conn net.Conn
	// hello and history are written first: the history's pieces are
	// shared with the broadcast and every other viewer.
	hello   []byte
	history [][]byte
	ch      chan []byte
	replies [][]byte
	// dropped says why the broadcast let it go ("": it did not).
	dropped string
}

// refuseNoActor is why a proxy that cannot act refuses a command.
const refuseNoActor = "this proxy does not act on the host's requests: it only forwards and records"

// refuseReadOnly is why a --read-only proxy refuses one.
const refuseReadOnly = "this proxy is read-only (--read-only): it takes no commands"

// takeCommands makes the viewers' commands act through a (nil: they are
// refused), unless opts.ReadOnly. b may be nil (no socket).
//
// The stdio proxy calls it once its injector exists. HOOK for the HTTP
// proxy (http.go, branch httprules): once RunHTTP has its injector, the one
// line `bc.takeCommands(inj, opts)` after it makes the keys of inflight
// attach (and of the proxy's own view) act on HTTP too; until then its
// viewers' commands are refused (refuseNoActor) and its hello says it
// does not act.
func (b *broadcast) takeCommands(a actor, opts Options) {
	if b == nil {
		return
	}
	defer b.decideOnce.Do(func() { close(b.decided) })
	b.mu.Lock()
	defer b.mu.Unlock()
	b.red = opts.Redactor
	b.stderr, b.name = opts.Stderr, opts.Name
	switch {
	case opts.ReadOnly:
		b.act, b.refuse = nil, refuseReadOnly
	default:
		b.act = a
	}
	b.h.Acts = b.act != nil
	b.setHello()
}

func newBroadcast(l *net.UnixListener, h Hello) *broadcast {
	b := &broadcast{l: l, subs: map[*viewer]struct{}{}, limit: historyBytes, refuse: refuseNoActor, start: h.Started, h: h,
		decided: make(chan struct{}), noReadTimeout: noReadTimeout}
	b.setHello()
	b.wg.Add(1)
	go b.accept()
	return b
}

func (b *broadcast) accept() {
	defer b.wg.Done()
	for {
		c, err := b.l.Accept()
		if err != nil {
			return
		}
		v := &viewer{conn: c, ch: make(chan []byte, viewerChunks)}
		if !b.decidedSeen {
			b.decidedSeen = true
			select {
			case <-b.decided:
			case <-time.After(decideWait):
			}
		}
		b.mu.Lock()
		if b.subs == nil { // closed
			b.mu.Unlock()
			c.Close()
			return
		}
		if len(b.subs) >= maxViewers {
			b.refuseViewer(c)
			b.mu.Unlock()
			continue
		}
		b.accepted++
		v.hello = b.hello
		if b.cut {
			v.hello = b.cutHello
		}
		// The history and then what follows it, under one lock: the
		// viewer's stream is the trace's, contiguous. The pieces are
		// shared: the viewer holds their slice headers, not a copy.
		v.history = slices.Clone(b.history)
		b.subs[v] = struct{}{}
		b.mu.Unlock()
		b.wg.Add(2)
		go b.serve(v)
		go b.commands(v)
	}
}

// commands reads one viewer's command lines until its connection ends,
// and answers each.
func (b *broadcast) commands(v *viewer) {
	defer b.wg.Done()
	br := bufio.NewReaderSize(v.conn, maxCommandBytes)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Too long: refused, and the rest of it skipped.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			b.reply(v, reply(Command{}, fmt.Errorf("a command line longer than %d bytes: not read", maxCommandBytes), b.since(time.Now())))
			if err != nil {
				b.drop(v, "")
				return
			}
			continue
		}
		if err != nil {
			// The viewer went (or the proxy closed its connection). A last
			// line without its newline is not a command. Its place is
			// freed now: waiting for a write to fail would keep a viewer
			// that left counted against maxViewers for as long as the
			// proxy has nothing to send.
			b.drop(v, "")
			return
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		b.mu.Lock()
		act, refuse := b.act, b.refuse
		b.mu.Unlock()
		b.reply(v, runCommand(line, act, refuse, b.since))
	}
}

func (b *broadcast) since(t time.Time) float64 {
	return float64(t.Sub(b.start).Microseconds()) / 1000
}

// reply hands one viewer its reply, at the end of the stream's current
// line: never inside one.
func (b *broadcast) reply(v *viewer, rec trace.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec.Text = b.red.String(rec.Text)
	line, _ := json.Marshal(rec)
	line = append(termsafe.EscapeJSON(line), '\n')
	if _, ok := b.subs[v]; !ok {
		return
	}
	if b.mid {
		v.replies = append(v.replies, line)
		return
	}
	b.send(v, line)
}

// refuseViewer turns c away with a hello that says why (under b.mu). The
// line is short and the connection new, so the write does not wait; the
// proxy says so on its stderr, at most once a second.
func (b *broadcast) refuseViewer(c net.Conn) {
	b.refused++
	h := b.h
	h.Refused = fmt.Sprintf("%d viewers are attached already (the most a proxy takes): detach one and try again", maxViewers)
	line, _ := json.Marshal(h)
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(append(termsafe.EscapeJSON(line), '\n'))
	c.Close()
	if now := time.Now(); now.Sub(b.lastRefusalSaid) >= time.Second {
		b.lastRefusalSaid = now
		b.say(fmt.Sprintf("refused a viewer on the attach socket: %d are attached already (%d refused so far)", maxViewers, b.refused))
	}
}

// say writes one line of the proxy's own on its stderr.
func (b *broadcast) say(text string) {
	if b.stderr != nil {
		fmt.Fprintf(b.stderr, "inflight proxy %s: %s\n", termsafe.Line(b.name), termsafe.Line(text))
	}
}

// setHello makes the hello lines of b.h.
func (b *broadcast) setHello() {
	h := b.h
	b.hello, _ = json.Marshal(h)
	// Inert on a terminal, as every trace line is (attach prints them).
	b.hello = append(termsafe.EscapeJSON(b.hello), '\n')
	h.HistoryCut = true
	b.cutHello, _ = json.Marshal(h)
	b.cutHello = append(termsafe.EscapeJSON(b.cutHello), '\n')
}

// send hands v a chunk, dropping v when it has no room (under b.mu).
func (b *broadcast) send(v *viewer, p []byte) {
	select {
	case v.ch <- p:
	default:
		v.dropped = fmt.Sprintf("dropped a viewer that fell behind (%d writes waiting for it)", viewerChunks)
		delete(b.subs, v)
		close(v.ch)
	}
}

// serve writes to one viewer what it is handed, until it is dropped or
// stops reading.
func (b *broadcast) serve(v *viewer) {
	defer b.wg.Done()
	defer v.conn.Close()
	b.mu.Lock()
	wait := b.noReadTimeout
	b.mu.Unlock()
	write := func(bufs net.Buffers) bool {
		_ = v.conn.SetWriteDeadline(time.Now().Add(wait))
		if _, err := bufs.WriteTo(v.conn); err != nil {
			why := ""
			if errors.Is(err, os.ErrDeadlineExceeded) {
				why = fmt.Sprintf("dropped a viewer that did not read for %s", wait)
			}
			b.drop(v, why)
			return false
		}
		return true
	}
	ok := write(net.Buffers{v.hello}) && write(v.history)
	v.history = nil // the pieces are the broadcast's; this viewer is done with them
	for p := range v.ch {
		if ok {
			ok = write(net.Buffers{p})
		}
	}
	// Closed: by drop, by send (no room) or by close.
	b.mu.Lock()
	why := v.dropped
	if why != "" {
		b.say(why)
	}
	b.mu.Unlock()
}

// drop lets v go, saying why ("": it left or its connection failed).
func (b *broadcast) drop(v *viewer, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[v]; ok {
		v.dropped = why
		delete(b.subs, v)
		close(v.ch)
	}
}

// Write is the trace writer's output: a copy to every viewer, never a
// wait. A viewer with no room left is disconnected (a chunk lost in the
// middle would break its lines).
func (b *broadcast) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	// One copy, into the history: every viewer is handed those bytes.
	shared := b.remember(p)
	b.mid = p[len(p)-1] != '\n'
	for v := range b.subs {
		b.send(v, shared)
		if !b.mid && len(v.replies) > 0 {
			for _, r := range v.replies {
				if _, ok := b.subs[v]; !ok {
					break // dropped: its channel is closed
				}
				b.send(v, r)
			}
			v.replies = nil
		}
	}
	return len(p), nil
}

// remember appends p to the history and returns the history's copy of
// it, which no one writes again; past the limit it drops the oldest lines
// (a cut keeps whole lines: it starts after a newline).
func (b *broadcast) remember(p []byte) []byte {
	var last []byte
	if n := len(b.history); n > 0 {
		last = b.history[n-1]
	}
	if cap(last)-len(last) < len(p) {
		// A new piece; the last one is full and stays as it is.
		last = make([]byte, 0, max(historyChunk, len(p)))
		b.history = append(b.history, last)
	}
	at := len(last)
	last = append(last, p...) // within its capacity: past every viewer's view of it
	b.history[len(b.history)-1] = last
	b.size += len(p)
	b.trim()
	return last[at:len(last):len(last)]
}

// trim drops the history's oldest bytes past the limit, up to the end of
// the line they cut.
func (b *broadcast) trim() {
	over := b.size - b.limit
	if over <= 0 {
		return
	}
	b.cut = true
	// Skip over bytes, then to just after the next newline.
	for over > 0 && len(b.history) > 0 {
		first := b.history[0]
		if over < len(first) {
			b.history[0] = first[over:]
			b.size -= over
			break
		}
		over -= len(first)
		b.size -= len(first)
		b.history[0] = nil
		b.history = b.history[1:]
	}
	for len(b.history) > 0 {
		first := b.history[0]
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			b.history[0] = first[i+1:]
			b.size -= i + 1
			return
		}
		b.size -= len(first)
		b.history[0] = nil
		b.history = b.history[1:]
	}
}

// historyText is the history as one text (for tests).
func (b *broadcast) historyText() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Join(b.history, nil)
}

// close stops accepting (removing the socket), lets every viewer have what
// it was handed, and waits for them (each write is bounded).
func (b *broadcast) close() {
	b.l.Close()
	b.mu.Lock()
	for v := range b.subs {
		close(v.ch)
	}
	b.subs = nil
	b.mu.Unlock()
	b.wg.Wait()
}

// checkSocket refuses to dial path, in dir, unless dir is the user's
// alone and path, when it is there, is a socket the user owns. A missing
// directory or socket is left for the dial to report.
func checkSocket(dir, path string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := checkPrivateDir(dir); err != nil {
		return fmt.Errorf("%w (%w)", err, ErrUntrusted)
	}
	fi, err := os.Lstat(path)
	switch uid, known := ownerOfStat(fi, err); {
	case err != nil:
		return nil
	case fi.Mode()&os.ModeSocket == 0:
		return fmt.Errorf("%s is not a socket (a symlink?): refusing it (%w)", path, ErrUntrusted)
	case known && uid != os.Getuid():
		return fmt.Errorf("socket %s belongs to user %d, not you: refusing it (%w)", path, uid, ErrUntrusted)
	}
	return nil
}
