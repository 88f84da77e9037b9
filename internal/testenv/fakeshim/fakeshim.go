// Package fakeshim gives the hook and doctor tests a shim to act on: a real
// process that counts the SIGHUPs it gets (testenv.SignalCounter) and the
// state record a shim with that pid would write. It lives beside testenv,
// not in it, because it needs internal/state, whose own tests use testenv.
package fakeshim
