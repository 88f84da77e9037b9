package keep

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// The MCP session of a kept server, on both sides of the guardian's
// control socket: the shim's conn tells it (notes), the kept guardian
// process remembers it (keeper, whose hooks the guardian calls) and hands
// it to the next shim that attaches. The guardian carries the notes and the
// session as bytes it does not read. Their JSON is the wire format of
// guardians since the keep began: a kept guardian outlives an update of
// the binary, so a new shim may attach to an old guardian and the other
// way round.

// Session is what a kept guardian remembers of the last client's session,
// for the next shim to take over without the server seeing a second
// initialize.
type Session struct {
	// Init is the InitializeResult the server gave (the "result" member);
	// Version its protocolVersion. Empty in the stateless era.
	Init    json.RawMessage `json:"init,omitempty"`
	Version string          `json:"version,omitempty"`
	// Subs are the resources the last client subscribed to.
	Subs []string `json:"subs,omitempty"`
	// ListChanged are the notifications/{tools,prompts,resources}/list_changed
	// the server sent while no client was attached, each once, for the next
	// client to hear.
	ListChanged []string `json:"list_changed,omitempty"`
	// CatalogChanged is ListChanged as guardians before it said it (tools
	// only): a kept guardian outlives an update of the binary.
	CatalogChanged bool `json:"catalog_changed,omitempty"`
}

// note is what the shim tells the kept guardian about the session: the
// InitializeResult and subscriptions (Session), a server->client request
// now open or answered (ReqID), a subscriptions/listen stream now open or
// closed (Listen, its id as sent upstream).
type note struct {
	Op      string          `json:"op"` // always "note"
	Session *Session        `json:"session,omitempty"`
	ReqID   json.RawMessage `json:"req_id,omitempty"`
	Listen  json.RawMessage `json:"listen,omitempty"`
	Open    bool            `json:"open,omitempty"`
}

// tell sends n to the kept guardian g.
func tell(g *guardian.Guardian, n note) error {
	n.Op = "note"
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return g.Note(b)
}

// isListChanged reports whether method says that one of the server's lists
// changed (notifications/{tools,prompts,resources}/list_changed, server
// features, 2025-11-25).
func isListChanged(method string) bool {
	switch method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		return true
	}
	return false
}

// goneMessage answers a server->client request nobody will answer, so that
// the server does not wait for it forever.
const goneMessage = "the client went away (mcp-heal kept the server running)"

// keeper is the kept guardian process's memory of the session (its hooks,
// guardian.KeepHooks): what the attached shim noted, and what the server
// said while nobody was attached.
type keeper struct {
	mu      sync.Mutex
	sess    Session
	srvReqs map[string][]byte // server->client requests open at the client, by raw id
	listens map[string][]byte // subscriptions/listen streams the client holds open, by upstream id
	// changed: the list_changed methods the server sent while nobody was
	// attached, each once.
	changed []string
}

func newKeeper() *keeper {
	return &keeper{srvReqs: map[string][]byte{}, listens: map[string][]byte{}}
}

func (k *keeper) hooks() guardian.KeepHooks {
	return guardian.KeepHooks{Started: k.started, Note: k.note, Attach: k.attach, Detach: k.detach, Drained: k.drained}
}

// started: a new server knows nothing of the old one's session. What
// changed while nobody was attached is still news to the next client.
func (k *keeper) started() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sess = Session{}
	clear(k.srvReqs)
	clear(k.listens)
}

// note records what the attached shim says about the session.
func (k *keeper) note(line []byte) {
	var n note
	if json.Unmarshal(line, &n) != nil || n.Op != "note" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if n.Session != nil {
		if n.Session.Init != nil {
			k.sess.Init, k.sess.Version = n.Session.Init, n.Session.Version
		}
		if n.Session.Subs != nil {
			k.sess.Subs = n.Session.Subs
		}
	}
	mark(k.listens, n.Listen, n.Open)
	mark(k.srvReqs, n.ReqID, n.Open)
}

// mark adds id to set (open) or removes it.
func mark(set map[string][]byte, id json.RawMessage, open bool) {
	switch {
	case len(id) == 0:
	case open:
		set[string(id)] = id
	default:
		delete(set, string(id))
	}
}

// attach is the session for the shim attaching: the last one's, and the
// lists that changed meanwhile (handed over once; undo keeps them for the
// next shim when this one never heard them).
func (k *keeper) attach() (json.RawMessage, func()) {
	k.mu.Lock()
	sess := k.sess
	sess.ListChanged, k.changed = k.changed, nil
	k.mu.Unlock()
	// A shim from before ListChanged reads only this.
	sess.CatalogChanged = slices.Contains(sess.ListChanged, toolsChanged)
	b, _ := json.Marshal(sess) // strings, and Init as json.Unmarshal took it: cannot fail
	undo := func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, m := range sess.ListChanged {
			if !slices.Contains(k.changed, m) {
				k.changed = append(k.changed, m)
			}
		}
	}
	return b, undo
}

// detach: the shim went away. Its open server->client requests get an
// error (nobody will answer them) and its subscriptions/listen streams are
// cancelled (nobody else knows their ids).
func (k *keeper) detach() [][]byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out [][]byte
	for _, id := range k.srvReqs {
		out = append(out, jsonrpc.ErrorReply(id, jsonrpc.CodeInternalError, goneMessage, nil))
	}
	clear(k.srvReqs)
	for _, id := range k.listens {
		params, err := json.Marshal(struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}{id, "the client went away"})
		if err == nil {
			out = append(out, jsonrpc.NewNotification("notifications/cancelled", params))
		}
	}
	clear(k.listens)
	return out
}

// drained handles a line the server wrote while nobody was attached: a
// request is answered with an error (nobody can answer it); a list that
// changed is remembered for the next client (it may have cached the list),
// once whatever the server repeated.
func (k *keeper) drained(line []byte) []byte {
	m, err := jsonrpc.PeekAnyText(line)
	if err != nil {
		return nil
	}
	switch {
	case m.Kind == jsonrpc.KindRequest:
		return jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError, goneMessage, nil)
	case m.Kind == jsonrpc.KindNotification && isListChanged(m.Method):
		k.mu.Lock()
		defer k.mu.Unlock()
		if !slices.Contains(k.changed, m.Method) {
			k.changed = append(k.changed, m.Method)
		}
	}
	return nil
}
