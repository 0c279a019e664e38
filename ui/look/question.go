package look

import (
	"encoding/json"
	"strconv"
	"strings"

	"inflight/urlhost"
	"inflight/wire"
)

// QuestionText names a server's question in a few words: `elicitation
// "…"`. line makes the server's words safe for the terminal.
func QuestionText(method string, params json.RawMessage, line func(string) string) string {
	var p struct {
		Message  string `json:"message"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case wire.MethodElicitationCreate:
		return "elicitation " + strconv.Quote(line(ClipRunes(p.Message, 80)))
	case wire.MethodSamplingCreate:
		text := ""
		if n := len(p.Messages); n > 0 {
			text = ContentText(p.Messages[n-1].Content)
		}
		return "sampling " + strconv.Quote(line(ClipRunes(text, 80)))
	}
	return line(method)
}

// ContentText is a message's content in words: its text, or its type.
func ContentText(raw json.RawMessage) string {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one block
	if json.Unmarshal(raw, &one) == nil && one.Type != "" {
		if one.Type == "text" {
			return one.Text
		}
		return "[" + one.Type + "]"
	}
	var many []block
	if json.Unmarshal(raw, &many) == nil {
		parts := make([]string, 0, len(many))
		for _, b := range many {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			} else {
				parts = append(parts, "["+b.Type+"]")
			}
		}
		return strings.Join(parts, " ")
	}
	return string(raw)
}

// AnswerWord says what an answer was, in a word: an elicitation's action,
// else "answered".
func AnswerWord(raw json.RawMessage) string {
	var a struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(raw, &a) == nil && a.Action != "" {
		return a.Action
	}
	return "answered"
}

// URLHost is the host a URL leads to (lower case, port kept, in punycode
// when it is not all ASCII; never the part before @), "" when it has none
// (a scheme without one, or not a URL). urlhost.Of says more.
func URLHost(raw string) string { return urlhost.Of(raw).Name }
