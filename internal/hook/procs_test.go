package hook

import "testing"

func TestRuns(t *testing.T) {
	tests := []struct {
		argv    []string
		command string
		args    []string
		want    bool
	}{
		{[]string{"sleep", "100"}, "sleep", []string{"100"}, true},
		{[]string{"/usr/bin/sleep", "100"}, "sleep", []string{"100"}, true},
		{[]string{"node", "/opt/srv/index.js", "--port", "1"}, "/opt/srv/index.js", []string{"--port", "1"}, true},
		{[]string{"npm", "exec", "-y", "@modelcontextprotocol/server-memory"}, "npx", []string{"-y", "@modelcontextprotocol/server-memory"}, true},
		{[]string{"sleep", "101"}, "sleep", []string{"100"}, false},
		{[]string{"python3", "-m", "srv"}, "uv", []string{"-m", "srv"}, false},
		{[]string{"sleep"}, "sleep", []string{"100"}, false},
		{[]string{"x"}, "", nil, false},
	}
	for _, tt := range tests {
		if got := runs(tt.argv, tt.command, tt.args); got != tt.want {
			t.Errorf("runs(%q, %q, %q) = %v, want %v", tt.argv, tt.command, tt.args, got, tt.want)
		}
	}
}
