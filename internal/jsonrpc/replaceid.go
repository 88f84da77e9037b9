package jsonrpc

import "github.com/tidwall/gjson"

// ReplaceID returns a copy of line with its top-level id replaced by id
// (raw JSON); everything else stays byte for byte. line is returned as it
// is when it has no id.
func ReplaceID(line, id []byte) []byte {
	r := gjson.GetBytes(line, "id")
	if !r.Exists() || r.Index <= 0 || r.Index+len(r.Raw) > len(line) {
		return line
	}
	out := make([]byte, 0, len(line)-len(r.Raw)+len(id))
	out = append(out, line[:r.Index]...)
	out = append(out, id...)
	return append(out, line[r.Index+len(r.Raw):]...)
}
