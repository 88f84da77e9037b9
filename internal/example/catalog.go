package example

// The catalog file (Options.CatalogFile): extra tools, prompts and
// resources that change from outside the session, so the server announces
// notifications/{tools,prompts,resources}/list_changed on its own, as a
// server whose catalog follows the outside world does (a plugin directory,
// a remote configuration). A test changes the catalog without being the
// server's client: a proxy must then carry the announcement to whichever
// client is, or will be, attached.

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// catalogPoll is how often the catalog file is read.
const catalogPoll = 50 * time.Millisecond

// catalog is what the file lists, by kind: "tool", "prompt", "resource".
type catalog map[string][]string

// catalogKinds: each kind, the notification announcing a change of its
// list, and the subscriptions/listen flag that asks for it (2026-07-28).
var catalogKinds = []struct{ kind, method, listenFlag string }{
	{"tool", "notifications/tools/list_changed", "toolsListChanged"},
	{"prompt", "notifications/prompts/list_changed", "promptsListChanged"},
	{"resource", "notifications/resources/list_changed", "resourcesListChanged"},
}

// readCatalog reads path: one `tool NAME`, `prompt NAME` or `resource
// URI` a line; anything else is ignored, and a missing file is empty.
func readCatalog(path string) catalog {
	c := catalog{}
	b, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	for _, line := range strings.Split(string(b), "\n") {
		kind, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		switch kind {
		case "tool", "prompt", "resource":
			c[kind] = append(c[kind], name)
		}
	}
	return c
}

// watchCatalog re-reads the catalog file until ctx ends and announces
// each list that changed. Owned by Run (s.wg).
func (s *server) watchCatalog(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(catalogPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next := readCatalog(s.opts.CatalogFile)
		s.mu.Lock()
		old := s.extra
		s.extra = next
		s.mu.Unlock()
		for _, k := range catalogKinds {
			if !slices.Equal(old[k.kind], next[k.kind]) {
				s.listChanged(k.method, k.listenFlag)
			}
		}
	}
}

// listChanged announces a changed list: to a handshake-era client once it
// initialized the session, and on every subscriptions/listen stream that
// asked for it (2026-07-28: on stdio, list changes travel only there).
func (s *server) listChanged(method, listenFlag string) {
	s.mu.Lock()
	handshake := s.version != ""
	s.mu.Unlock()
	if handshake {
		s.send(jsonrpc.NewNotification(method, nil))
	}
	s.notifyListens(func(l listen) bool { return l.lists[listenFlag] }, method, map[string]any{})
}

// extras are the catalog's entries of kind, in file order.
func (s *server) extras(kind string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.extra[kind])
}

func (s *server) tools() []map[string]any {
	list := toolList()
	if s.opts.Faults.TestTools {
		list = append(list, testToolList()...)
	}
	if s.after(s.opts.Faults.NewToolAfter) {
		list = append(list, map[string]any{"name": "newtool", "description": "Returns its name.",
			"inputSchema": schema(nil), "annotations": annotations("newtool", true, true, false)})
	}
	for _, name := range s.extras("tool") {
		list = append(list, map[string]any{"name": name, "description": "From the catalog file; returns its name.",
			"inputSchema": schema(nil), "annotations": annotations(name, true, true, false)})
	}
	return list
}

func (s *server) prompts() []map[string]any {
	list := promptList()
	for _, name := range s.extras("prompt") {
		list = append(list, map[string]any{"name": name, "description": "From the catalog file."})
	}
	return list
}

func (s *server) resources() []map[string]any {
	list := resourceList()
	for _, uri := range s.extras("resource") {
		list = append(list, map[string]any{"uri": uri, "name": uri, "mimeType": "text/plain", "description": "From the catalog file."})
	}
	return list
}

// isExtra reports whether the catalog lists name as kind.
func (s *server) isExtra(kind, name string) bool {
	return slices.Contains(s.extras(kind), name)
}
