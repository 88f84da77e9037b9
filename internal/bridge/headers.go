package bridge

import (
	"encoding/base64"
	"io"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// What a Streamable HTTP request carries besides its body, and how a JSON
// answer is read.

// header builds the headers of a request to the endpoint.
func (c *httpConn) header(x *exchange) http.Header {
	h := c.d.o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	c.smu.Lock()
	sid, ver := c.sessionID, c.protoVer
	if ver == "" {
		ver = c.metaVer
	}
	meta := false
	if x != nil && x.kind == jsonrpc.KindRequest {
		if mv := gjson.GetBytes(x.body, metaVersionPath); mv.Type == gjson.String && mv.Str != "" {
			ver, meta = mv.Str, true
			c.metaVer = mv.Str
		}
	}
	c.smu.Unlock()
	if x != nil && x.isInit() && !meta {
		// A fresh session: initialize carries neither header. One that
		// carries a stateless-era _meta version is a request of that era
		// like any other (a server of that era answers it 404 -32601,
		// SEP-2575), and gets that era's headers.
		return h
	}
	if sid != "" {
		h.Set(hSessionID, sid)
	}
	if ver != "" {
		h.Set(hProtocol, ver)
	}
	if x != nil && x.kind == jsonrpc.KindRequest && ver >= statelessVersion {
		h.Set(hMethod, x.method)
		if name, ok := requestName(x.method, x.body); ok {
			h.Set(hName, headerValue(name))
		}
		if x.method == "tools/call" {
			for k, v := range c.d.params.headers(x.body) {
				h.Set(k, v)
			}
		}
	}
	return h
}

// requestName is the Mcp-Name header's value (SEP-2243).
func requestName(method string, body []byte) (string, bool) {
	var path string
	switch method {
	case "tools/call", "prompts/get":
		path = "params.name"
	case "resources/read":
		path = "params.uri"
	default:
		return "", false
	}
	r := gjson.GetBytes(body, path)
	return r.Str, r.Type == gjson.String
}

// headerValue encodes a header value the way SEP-2243 says: as is when it
// is plain printable ASCII, else base64 in =?base64?...?=.
func headerValue(s string) string {
	plain := len(s) == 0 || (s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t')
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain && !(len(s) >= 12 && s[:9] == "=?base64?" && s[len(s)-2:] == "?=") {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// readJSON reads a JSON response body of at most max bytes. A longer one
// is not read (when its Content-Length says so) or not read further: the
// caller closes the body, which drops the connection rather than drain
// it. tl then describes it (Len -1 when the size is unknown).
func readJSON(resp *http.Response, max int) ([]byte, *jsonrpc.TooLongError, error) {
	if resp.ContentLength > int64(max) {
		return nil, &jsonrpc.TooLongError{Len: resp.ContentLength, Limit: max}, nil
	}
	if resp.ContentLength >= 0 {
		// Known length (net/http ends the body there): one buffer of that
		// size, +1 to see EOF without growing.
		buf := make([]byte, 0, int(resp.ContentLength)+1)
		for {
			n, err := resp.Body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				return buf, nil, nil
			}
			if err != nil {
				return nil, nil, err
			}
		}
	}
	// Unknown length: in chunks, never past the ceiling, then joined once.
	// Not io.ReadAll, nor a buffer grown by doubling: they hold the old and
	// the new copy at once, and the garbage of the smaller ones adds up to
	// several times the body before the collector runs (a 1 GB body against
	// a 256 MiB ceiling took 650 MiB, issue 16).
	return readChunks(resp.Body, &jsonrpc.Chunks{}, max)
}

// readChunks reads body to its end into c, or until c holds more than max.
func readChunks(body io.Reader, c *jsonrpc.Chunks, max int) ([]byte, *jsonrpc.TooLongError, error) {
	for {
		n, err := body.Read(c.Spare(32 << 10))
		c.Commit(n)
		if c.Len() > max {
			c.Reset()
			return nil, &jsonrpc.TooLongError{Len: -1, Limit: max}, nil
		}
		if err == io.EOF {
			return c.AppendTo(nil), nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}
