package formats

import "testing"

// The validators tell a valid document from an invalid one, so that a
// test that passes through them has been read.
func TestValidatorsRefuseWhatIsNotValid(t *testing.T) {
	JUnit(t, []byte(`<?xml version="1.0"?><testsuites><testsuite name="s" tests="1"><testcase name="c"><failure message="m">x</failure></testcase></testsuite></testsuites>`))
	HAR(t, []byte(`{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[]}}`))
	for _, tc := range []struct {
		name string
		fn   func(testing.TB, []byte)
		doc  string
	}{
		{"junit without tests", JUnit, `<?xml version="1.0"?><testsuites><testsuite name="s"><testcase name="c"/></testsuite></testsuites>`},
		{"junit unknown element", JUnit, `<?xml version="1.0"?><testsuites><testsuite name="s" tests="1"><testcase name="c"><passed/></testcase></testsuite></testsuites>`},
		{"har without creator", HAR, `{"log":{"version":"1.2","entries":[]}}`},
		{"har entry without timings", HAR, `{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"2026-01-01T00:00:00.000Z","time":1,"request":{"method":"GET","url":"http://x/","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":-1},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"content":{"size":0,"mimeType":""},"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{}}]}}`},
	} {
		ft := &fakeT{TB: t}
		func() {
			defer func() { recover() }()
			tc.fn(ft, []byte(tc.doc))
		}()
		if !ft.failed {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// fakeT records a failure instead of failing the test; Fatalf ends the
// validator's goroutine by panicking, which the caller recovers.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
func (f *fakeT) Helper()               {}
