// Package wintest is the Windows test run: TestUnderWine (full suite,
// Linux) builds every package's Windows test binary and runs it under Wine
// with a prepared prefix (testenv.WinePrefix), so that the README's one
// test command also proves what Wine can show of mcp-heal on Windows.
// CONTRIBUTING.md says how to run it alone and what Wine cannot show.
package wintest
