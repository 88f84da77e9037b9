package procinfo

import (
	"encoding/binary"
	"slices"
	"testing"
)

// procargs2 builds a kern.procargs2 buffer as macOS lays it out.
func procargs2(argc uint32, parts ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, argc)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestSplitProcArgs(t *testing.T) {
	tests := []struct {
		name string
		buf  []byte
		exe  string
		args []string
		env  []string
	}{
		{
			"full", procargs2(3, "/bin/sleep\x00\x00\x00\x00", "sleep\x00", "\x00", "100\x00",
				"A=1\x00MCP_HEAL_TREE=x\x00", "\x00\x00", "executable_path=/bin/sleep\x00\x00\x00"),
			"/bin/sleep", []string{"sleep", "", "100"},
			[]string{"A=1", "MCP_HEAL_TREE=x", "executable_path=/bin/sleep"},
		},
		// An argument that looks like the variable is not the environment.
		{"argument only", procargs2(2, "/bin/sh\x00", "sh\x00", "MCP_HEAL_TREE=x\x00"), "/bin/sh", []string{"sh", "MCP_HEAL_TREE=x"}, nil},
		{"truncated arguments", procargs2(3, "/bin/sh\x00", "sh\x00-c"), "/bin/sh", []string{"sh", "-c"}, nil},
		{"no terminated path", procargs2(1, "/bin/sh"), "", nil, nil},
		{"short", []byte{1, 0}, "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exe, args, rest := splitProcArgs(tt.buf)
			env := nulStrings(rest)
			if exe != tt.exe || !slices.Equal(args, tt.args) || !slices.Equal(env, tt.env) {
				t.Errorf("got %q %q %q, want %q %q %q", exe, args, env, tt.exe, tt.args, tt.env)
			}
		})
	}
}
