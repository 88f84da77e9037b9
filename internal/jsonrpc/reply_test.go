package jsonrpc

import "testing"

// The request and the notification share one builder; a notification has
// no id at all (not a null one), and nil params leave "params" out.
func TestNewRequestAndNotification(t *testing.T) {
	for _, c := range []struct {
		got  []byte
		want string
	}{
		{NewRequest([]byte(`7`), "tools/list", nil), `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`},
		{NewRequest([]byte(`"a"`), "ping", []byte(`{}`)), `{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`},
		{NewNotification("notifications/initialized", nil), `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{NewNotification("notifications/cancelled", []byte(`{"requestId":3}`)), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`},
	} {
		if string(c.got) != c.want {
			t.Errorf("built %s, want %s", c.got, c.want)
		}
	}
}
