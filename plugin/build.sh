# Sourced by plugin/mcp-heal in a source checkout (never in the released
# plugin, which has no go.mod): build the mcp-heal binary with the local Go
# into the plugin's cache. The caller has set root, data, cache, key, bin,
# kind and go_min, and defined say and keep_stable.

building="mcp-heal: building its binary from source with the local Go (needs Go $go_min or newer; the first build takes about a minute, up to a few on a slow machine)"

# go_too_old prints why the local Go cannot build this plugin, if it
# cannot: go.mod's `go` line is the real requirement, and GOTOOLCHAIN=local
# forbids the toolchain download that would otherwise happen silently.
go_too_old() {
	need=
	while read -r k v; do
		[ "$k" = go ] && need=$v && break
	done <"$root/go.mod"
	have=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null)
	have=${have#go}
	[ -n "$need" ] || return 1
	IFS=. read -r n1 n2 n3 <<EOF
$need
EOF
	IFS=. read -r h1 h2 h3 <<EOF
${have%%[!0-9.]*}
EOF
	for p in "${h1:-0}:${n1:-0}" "${h2:-0}:${n2:-0}" "${h3:-0}:${n3:-0}"; do
		[ "${p%:*}" -gt "${p#*:}" ] && return 1
		[ "${p%:*}" -lt "${p#*:}" ] && echo "needs Go $need or newer, found go$have" && return 0
	done
	return 1
}

# build compiles the plugin's source into $bin; the caller holds the lock.
# A failure leaves .build-failed-$key with the reason.
build() {
	log=$cache/build.log
	if why=$(go_too_old); then
		printf '%s\n' "$why" >"$cache/.build-failed-$key"
		return 1
	fi
	tmp=$cache/.mcp-heal-$key.$$.tmp
	if (cd "$root" && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$key" -o "$tmp" ./cmd/mcp-heal) >"$log" 2>&1 &&
		chmod 0700 "$tmp" && mv -f "$tmp" "$bin"; then
		rm -f "$cache/.build-failed-$key"
		return 0
	fi
	rm -f "$tmp"
	printf 'go build failed (see %s)\n' "$log" >"$cache/.build-failed-$key"
	return 1
}

# lock takes the build lock (status 1: another launcher holds it; 2: it
# cannot be made, the cache being read-only or full); a lock older than 10
# minutes is left over from a killed build.
lock() {
	lockdir=$cache/.build-$key.lock
	mkdir "$lockdir" 2>/dev/null && return 0
	[ -d "$lockdir" ] || return 2
	[ -n "$(find "$lockdir" -maxdepth 0 -mmin +10 2>/dev/null)" ] || return 1
	rm -rf "$lockdir"
	mkdir "$lockdir" 2>/dev/null
}

# from_source sets bin to the binary built from this checkout, building it
# first (in the background for hooks, which pass through until it is
# ready; the command waits), or says why there is none and exits 0.
from_source() {
	where=$root/bin/.build
	[ -n "$data" ] && where=$data/bin
	nocache="mcp-heal: install the released plugin (docs/install.md): this copy cannot build its binary, as $where cannot be written (read-only, full, a symlink or another user's), so mcp-heal's hooks are off."
	if [ -z "$cache" ]; then
		say nocache "$nocache"
		exit 0
	fi
	if [ $kind = hook ]; then
		# PreToolUse, before every MCP call, starts no build and says
		# nothing (SessionStart does): the call goes through.
		[ "$event" = PreToolUse ] && exit 0
		if [ -e "$cache/.build-failed-$key" ]; then
			why=
			IFS= read -r why <"$cache/.build-failed-$key"
			say failed "mcp-heal: run /mcp-heal to try again: building its binary failed ($why), so mcp-heal's hooks are off."
			exit 0
		fi
		lock
		case $? in
		0)
			say building "$building; MCP calls pass through unchecked until it is ready."
			# Detached from the hook's pipes, so Claude Code does not
			# wait for it.
			(build; rmdir "$lockdir") </dev/null >/dev/null 2>&1 &
			;;
		2) say nocache "$nocache" ;;
		esac
		exit 0 # hooks pass through until the build is ready
	fi
	lock
	locked=$?
	if [ $locked = 2 ]; then
		say nocache "$nocache"
		exit 0
	elif [ $locked = 0 ]; then
		say building "$building."
		build
		rmdir "$lockdir"
	else
		# Another launcher is building: the command waits for it.
		i=0
		while [ ! -x "$bin" ] && [ -d "$lockdir" ] && [ $i -lt 300 ]; do
			sleep 1
			i=$((i + 1))
		done
	fi
	if [ -x "$bin" ]; then
		keep_stable
		return 0
	fi
	why="the build did not finish"
	[ -e "$cache/.build-failed-$key" ] && IFS= read -r why <"$cache/.build-failed-$key"
	say failed "mcp-heal: run /mcp-heal to try again: building its binary failed: $why."
	exit 0
}
