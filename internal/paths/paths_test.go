package paths

import "testing"

func TestFor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		goos string
		env  func(string) string
		want Paths
	}{
		{"linux defaults", "linux", env("HOME", "/home/u"), Paths{
			State: "/home/u/.local/state/mcp-heal", Attention: "/home/u/.local/state/mcp-heal/attention",
			Data: "/home/u/.local/share/mcp-heal", StableBinary: "/home/u/.local/share/mcp-heal/bin/mcp-heal",
			Runtime: "/home/u/.local/state/mcp-heal/run"}},
		// The macOS bug of issue 8: the same rule as Linux, not
		// ~/Library/Application Support.
		{"darwin defaults", "darwin", env("HOME", "/Users/u"), Paths{
			State: "/Users/u/.local/state/mcp-heal", Attention: "/Users/u/.local/state/mcp-heal/attention",
			Data: "/Users/u/.local/share/mcp-heal", StableBinary: "/Users/u/.local/share/mcp-heal/bin/mcp-heal",
			Runtime: "/Users/u/.local/state/mcp-heal/run"}},
		{"overrides", "darwin", env("HOME", "/Users/u", "XDG_STATE_HOME", "/s", "XDG_DATA_HOME", "/d",
			"XDG_RUNTIME_DIR", "/run/user/1", "CLAUDE_PLUGIN_DATA", "/p"), Paths{
			State: "/s/mcp-heal", Attention: "/s/mcp-heal/attention", Data: "/d/mcp-heal",
			StableBinary: "/d/mcp-heal/bin/mcp-heal", Runtime: "/run/user/1/mcp-heal", PluginData: "/p"}},
		{"relative XDG values are ignored", "linux", env("HOME", "/h", "XDG_STATE_HOME", "rel", "XDG_DATA_HOME", "./x"), Paths{
			State: "/h/.local/state/mcp-heal", Attention: "/h/.local/state/mcp-heal/attention",
			Data: "/h/.local/share/mcp-heal", StableBinary: "/h/.local/share/mcp-heal/bin/mcp-heal",
			Runtime: "/h/.local/state/mcp-heal/run"}},
		{"no HOME", "linux", env(), Paths{
			State: "/nonexistent/.local/state/mcp-heal", Attention: "/nonexistent/.local/state/mcp-heal/attention",
			Data: "/nonexistent/.local/share/mcp-heal", StableBinary: "/nonexistent/.local/share/mcp-heal/bin/mcp-heal",
			Runtime: "/nonexistent/.local/state/mcp-heal/run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := For(tt.goos, tt.env); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestForWindowsStableBinaryIsExe(t *testing.T) {
	got := For("windows", func(k string) string {
		return map[string]string{"USERPROFILE": `C:\Users\u`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`}[k]
	})
	if got.StableBinary[len(got.StableBinary)-4:] != ".exe" {
		t.Errorf("windows stable binary: got %q, want a .exe", got.StableBinary)
	}
}

// TestForWindows: the Windows rule computed on any platform is a Windows
// path (backslashes, drive letter, .exe), so wrap's entries and the
// Windows launcher's paths can be tested on Linux. Before WindowsJoin,
// For("windows") on Linux joined with "/" (C:\Users\u/AppData/Local/...).
func TestForWindows(t *testing.T) {
	env := map[string]string{"USERPROFILE": `C:\Users\u`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`}
	got := For("windows", func(k string) string { return env[k] })
	want := Paths{
		State: `C:\Users\u\AppData\Local\mcp-heal\state`, Attention: `C:\Users\u\AppData\Local\mcp-heal\state\attention`,
		Data: `C:\Users\u\AppData\Local\mcp-heal\data`, StableBinary: `C:\Users\u\AppData\Local\mcp-heal\data\bin\mcp-heal.exe`,
		Runtime: `C:\Users\u\AppData\Local\mcp-heal\state\run`,
	}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	env = map[string]string{"USERPROFILE": `C:\Users\u`, "CLAUDE_PLUGIN_DATA": `D:/claude/data/`, "XDG_STATE_HOME": `\\srv\share\st`}
	got = For("windows", func(k string) string { return env[k] })
	if got.PluginData != `D:/claude/data/` || got.State != `\\srv\share\st\mcp-heal` || got.Data != `C:\Users\u\AppData\Local\mcp-heal\data` {
		t.Errorf("overrides: got %+v", got)
	}
}

func TestWindowsJoin(t *testing.T) {
	for _, tt := range []struct {
		elem []string
		want string
	}{
		{[]string{`C:\`, "x", "y.exe"}, `C:\x\y.exe`},
		{[]string{`C:/a/`, `/b`}, `C:\a\b`},
		{[]string{`\\srv\share`, "x"}, `\\srv\share\x`},
		{[]string{"", `C:\a`, ""}, `C:\a`},
	} {
		if got := WindowsJoin(tt.elem...); got != tt.want {
			t.Errorf("WindowsJoin(%q) = %q, want %q", tt.elem, got, tt.want)
		}
	}
}
