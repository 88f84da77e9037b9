// Package sumstest is the table every reader of SHA256SUMS is tested on:
// the Go package (sha256sums), the sh launcher and the Windows launcher.
package sumstest

import "strings"

// Case is one SHA256SUMS file and whether the bundled binary it is about
// may run.
type Case struct {
	Name string
	// File is the SHA256SUMS text: {sum} is the binary's SHA-256 in
	// lower-case hex, {SUM} in upper-case, {other} a SHA-256 of
	// something else, {name} the bundled binary's file name.
	File string
	Runs bool // the listed hash is the binary's: it runs
}

// Cases are the table.
var Cases = []Case{
	{"sha256sum", "{sum}  {name}\n", true},
	{"binary mode", "{sum} *{name}\n", true},
	{"one space", "{sum} {name}\n", true},
	{"crlf", "{sum}  {name}\r\n", true},
	{"no final newline", "{sum}  {name}", true},
	{"upper-case hash", "{SUM}  {name}\n", true},
	{"upper-case, binary mode, crlf", "{SUM} *{name}\r\n", true},
	{"among others", "{other}  mcp-heal-plan9-amd64\n{sum}  {name}\n{other}  x\n", true},
	{"listed twice alike", "{sum}  {name}\n{SUM}  {name}\n", true},
	{"wrong hash", "{other}  {name}\n", false},
	{"not listed", "{sum}  {name}.old\n", false},
	{"a longer name", "{sum}  x{name}\n", false},
	{"listed twice, differently", "{sum}  {name}\n{other}  {name}\n", false},
	{"listed twice, differently, the other first", "{other}  {name}\n{sum}  {name}\n", false},
	{"short hash", "{short}  {name}\n", false},
	{"empty", "", false},
}

// Other is the SHA-256 {other} stands for.
const Other = "0000000000000000000000000000000000000000000000000000000000000000"

// Expand is c.File for a binary called name with SHA-256 sum (lower-case
// hex).
func (c Case) Expand(sum, name string) string {
	return strings.NewReplacer("{sum}", sum, "{SUM}", strings.ToUpper(sum), "{other}", Other,
		"{short}", sum[:63], "{name}", name).Replace(c.File)
}
