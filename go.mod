module github.com/mcp-heal/mcp-heal

go 1.26.8

require (
	github.com/adrg/xdg v0.5.3
	github.com/natefinch/atomic v1.0.1
	github.com/spf13/pflag v1.0.10
	github.com/tidwall/gjson v1.20.0
)

require (
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	golang.org/x/sys v0.26.0 // indirect
)
