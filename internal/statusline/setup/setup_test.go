package setup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

const cmd = "/opt/mcp heal/mcp-heal statusline"

// TestInsert: the statusLine is added as the last member, laid out like
// the file, and every other byte is kept.
func TestInsert(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty object", "{}\n", "{\n  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \"" + cmd + "\",\n    \"padding\": 0,\n    \"refreshInterval\": 5\n  }\n}\n"},
		{"pretty, two spaces", "{\n  \"model\": \"opus\"\n}\n", "{\n  \"model\": \"opus\",\n  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \"" + cmd + "\",\n    \"padding\": 0,\n    \"refreshInterval\": 5\n  }\n}\n"},
		{"pretty, tabs, CRLF", "{\r\n\t\"a\": [1,\r\n\t\t2]\r\n}", "{\r\n\t\"a\": [1,\r\n\t\t2],\r\n\t\"statusLine\": {\r\n\t  \"type\": \"command\",\r\n\t  \"command\": \"" + cmd + "\",\r\n\t  \"padding\": 0,\r\n\t  \"refreshInterval\": 5\r\n\t}\r\n}"},
		{"compact", `{"a":1,"b":{"c":"}"}}`, `{"a":1,"b":{"c":"}"},"statusLine":{"type":"command","command":"` + cmd + `","padding":0,"refreshInterval":5}}`},
	}
	for _, c := range cases {
		got, err := Insert([]byte(c.in), cmd)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %v\n got %q\nwant %q", c.name, err, got, c.want)
		}
	}
	if _, err := Insert([]byte(`[1]`), cmd); err == nil {
		t.Error("an array is no settings file")
	}
}

// TestInstall: --install makes the file when missing, adds to one without
// a statusLine (a backup kept), and leaves one with a statusLine
// byte for byte as it was, saying what it holds.
func TestInstall(t *testing.T) {
	testenv.UseStateDir(t, testenv.TempDir(t)) // backups go to the state dir
	dir := testenv.TempDir(t)
	path := filepath.Join(dir, ".claude", "settings.json")
	backup, cur, err := Install(path, cmd)
	if err != nil || backup != "" || cur != nil {
		t.Fatalf("new file: %q %v %v", backup, cur, err)
	}
	b, _ := os.ReadFile(path)
	if gjson.GetBytes(b, "statusLine.command").String() != cmd {
		t.Fatalf("new file holds %s", b)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("new settings file mode %v", st.Mode().Perm())
	}
	_, cur, err = Install(path, cmd)
	if !errors.Is(err, ErrExists) || cur == nil || !Ours(cur.Command) {
		t.Fatalf("again: %v %+v", err, cur)
	}

	mine := "{\n  \"model\": \"opus\",\n  \"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/ps1.sh\"}\n}\n"
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cur, err = Install(path, cmd)
	if !errors.Is(err, ErrExists) || cur == nil || cur.Command != "~/bin/ps1.sh" || Ours(cur.Command) {
		t.Fatalf("the user's own: %v %+v", err, cur)
	}
	if b, _ := os.ReadFile(path); string(b) != mine {
		t.Fatalf("the user's statusLine was touched:\n%s", b)
	}

	plain := "{\n  \"model\": \"opus\"\n}\n"
	os.WriteFile(path, []byte(plain), 0o644)
	backup, _, err = Install(path, cmd)
	if err != nil || backup == "" {
		t.Fatalf("added: %q %v", backup, err)
	}
	if b, _ := os.ReadFile(backup); string(b) != plain {
		t.Errorf("the backup holds %q", b)
	}
	if b, _ := os.ReadFile(path); gjson.GetBytes(b, "model").String() != "opus" || gjson.GetBytes(b, "statusLine.command").String() != cmd {
		t.Errorf("after adding: %s", b)
	}

	os.WriteFile(path, []byte("{ broken"), 0o644)
	if _, _, err := Install(path, cmd); err == nil {
		t.Error("a broken settings file was written to")
	}
	if b, _ := os.ReadFile(path); string(b) != "{ broken" {
		t.Errorf("a broken settings file changed: %q", b)
	}
}

// TestCombined: the combined command runs with a real shell and shows the
// user's line, then mcp-heal's, on one line, both reading the payload.
func TestCombined(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("needs a POSIX sh: the statusLine command runs in one")
	}
	theirs := `read -r p; printf 'mine:%s\n' "$p"; echo second line`
	ours := `sed 's/^/mcp:/'`
	c := exec.Command(sh, "-c", Combined(theirs, ours))
	c.Stdin = strings.NewReader("{\"session_id\":\"s\"}\n")
	out, err := c.CombinedOutput()
	if err != nil || string(out) != "mine:{\"session_id\":\"s\"}  mcp:{\"session_id\":\"s\"}" {
		t.Fatalf("combined: %v %q", err, out)
	}
	if !Ours(Combined(theirs, Command("/x/mcp-heal"))) {
		t.Error("a combined line runs mcp-heal's")
	}
	if Command("/a b/mcp-heal") != "'/a b/mcp-heal' statusline" || Command("/usr/bin/mcp-heal") != "/usr/bin/mcp-heal statusline" {
		t.Error("Command quotes a path with a space, and only then")
	}
}
