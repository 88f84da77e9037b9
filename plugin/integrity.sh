# Sourced by plugin/mcp-heal when it checks a bundled binary against
# bin/SHA256SUMS (a released plugin's first run, or a cache found open to
# others): never on the cached path. The caller has set root, cache, key
# and bin, and defined say. The format's rule is internal/sha256sums;
# plugin/sums_test.go runs this on that package's table.

# sha256 prints the SHA-256 of a file in hex, with what the OS has (Linux:
# sha256sum; macOS: shasum; either: openssl).
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		h=$(sha256sum "$1" 2>/dev/null) || return 1
	elif command -v shasum >/dev/null 2>&1; then
		h=$(shasum -a 256 "$1" 2>/dev/null) || return 1
	elif command -v openssl >/dev/null 2>&1; then
		h=$(openssl dgst -sha256 -r "$1" 2>/dev/null) || return 1
	else
		return 1
	fi
	# GNU sha256sum starts the line with a backslash when the path holds
	# one (or a newline).
	h=${h#\\}
	printf '%s\n' "${h%% *}"
}

# want_sum sets want to the SHA-256 that bin/SHA256SUMS gives the file
# named $1, in lower-case hex (empty: not listed, or listed twice with
# different hashes). The format's rule is internal/sha256sums: a 64-digit
# hash in either case, a space, the name after a second space or a '*';
# CRLF line ends, a last line without its newline. plugin/sums_test.go
# runs this on that package's table.
want_sum() {
	want=
	cr=$(printf '\r')
	while read -r h n || [ -n "$h" ]; do
		n=${n%"$cr"}
		if [ "${n#\*}" = "$1" ] && [ ${#h} -eq 64 ]; then
			case $h in
			*[!0-9a-fA-F]*) ;;
			*)
				case $h in *[A-F]*) h=$(printf '%s' "$h" | tr ABCDEF abcdef) ;; esac
				if [ -z "$want" ] || [ "$want" = "$h" ]; then
					want=$h
				else
					want=-
				fi
				;;
			esac
		fi
		h=
	done <"$root/bin/SHA256SUMS"
	[ "$want" = - ] && want=
	return 0
}

# matches reports whether the file $1 has the SHA-256 $want; it says why
# and exits when it cannot be checked at all.
matches() {
	if ! got=$(sha256 "$1"); then
		[ -e "$1" ] || return 1
		say integrity "mcp-heal: install sha256sum, shasum or openssl: without one the bundled binary $name cannot be checked, so it was not run and mcp-heal's hooks are off."
		exit 0
	fi
	[ -n "$want" ] && [ "$got" = "$want" ]
}

# bundled_sum sets name and want for this platform's bundled binary $1, or
# says why it cannot be checked and exits.
bundled_sum() {
	name=${1##*/}
	if [ ! -r "$root/bin/SHA256SUMS" ]; then
		say integrity "mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): it has no bin/SHA256SUMS to check bin/$name against, so it was not run and mcp-heal's hooks are off."
		exit 0
	fi
	want_sum "$name"
}

mismatch() {
	say integrity "mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): the bundled binary bin/$name does not match the plugin's SHA256SUMS, so it was not run and mcp-heal's hooks are off."
	exit 0
}

# verify_copy copies the bundled binary $1 into the cache and keeps the
# copy only when its SHA-256 is $want. Hashing the copy (not the original)
# means what runs is what was checked. Status 1: the copy could not be
# made (the caller checks the original instead).
verify_copy() {
	tmp=$cache/.verify-$key.$$
	if ! cp "$1" "$tmp" 2>/dev/null; then
		rm -f "$tmp"
		return 1
	fi
	if ! matches "$tmp"; then
		rm -f "$tmp"
		mismatch
	fi
	chmod 0700 "$tmp" 2>/dev/null && mv -f "$tmp" "$bin" 2>/dev/null && return 0
	rm -f "$tmp"
	return 1
}
