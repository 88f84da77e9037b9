// Package arch holds no code. Its tests pin the tree's layout where a
// rule is written once and must stay that way: which package owns "is
// this process alive", "find this server's shim" and the signal sender,
// which way the imports point (issue 26, "the code a newcomer reads"),
// and where a pipe rawio reads raw may be made blocking (nowhere: no
// Fd() on it, issue 30). A second copy of a rule, or an arrow pointing
// up, fails here with the file and line.
package arch
