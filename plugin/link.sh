# Sourced by plugin/mcp-heal for /mcp-heal link (`mcp-heal command link`).
# The caller has set stable, the stable copy's path, and installed it.

# link_cli is /mcp-heal link: a symlink ~/.local/bin/mcp-heal to the stable
# copy (which every plugin update refreshes), so that a shell has
# `mcp-heal`. It never replaces a file it did not make and never edits a
# shell's startup files: when ~/.local/bin is not on PATH it prints the
# line to add. It never links into a directory another user could write
# to (theirs, or open to the group or to everyone): whoever can write there
# could replace what `mcp-heal` runs in the user's shell.
link_cli() {
	dir=${HOME:-/nonexistent}/.local/bin
	if [ ! -x "$stable" ]; then
		echo "mcp-heal: error: there is no stable copy at $stable to link to (the plugin's data directory cannot be written?)"
		return 0
	fi
	for d in "${dir%/bin}" "$dir"; do
		if not_private "$d"; then
			echo "mcp-heal: error: $why, so another user could replace what mcp-heal runs in your shell; nothing was linked"
			echo "mcp-heal: hint: run chown $(id -un) $d; chmod go-w $d; then run /mcp-heal link again, or run in a shell: $stable"
			return 0
		fi
	done
	if [ -L "$dir/mcp-heal" ] && [ "$(readlink "$dir/mcp-heal")" = "$stable" ]; then
		echo "$dir/mcp-heal already links to $stable."
	elif [ -e "$dir/mcp-heal" ] || [ -L "$dir/mcp-heal" ]; then
		echo "mcp-heal: error: $dir/mcp-heal exists and is not mcp-heal's link, so it was left as it is"
		echo "mcp-heal: hint: run in a shell: $stable, or remove $dir/mcp-heal and run /mcp-heal link again"
		return 0
	elif mkdir -p "$dir" 2>/dev/null && ln -s "$stable" "$dir/mcp-heal" 2>/dev/null; then
		echo "Linked $dir/mcp-heal to $stable (remove it with: rm $dir/mcp-heal)."
	else
		echo "mcp-heal: error: cannot create $dir/mcp-heal"
		echo "mcp-heal: hint: run in a shell: $stable"
		return 0
	fi
	case :${PATH:-}: in
	*:"$dir":* | *:"$dir"/:*) echo "In a shell, run: mcp-heal status" ;;
	*)
		echo "$dir is not on your PATH: add this line to your shell's startup file (~/.bashrc, ~/.zshrc), then open a new shell:"
		echo '  export PATH="$HOME/.local/bin:$PATH"'
		;;
	esac
}

# not_private succeeds, with why set, when the directory $1 exists and
# another user could write to it: another uid owns it, or its group or
# everyone may write (sticky or not: a sticky directory still lets anyone
# create the name). A missing one is made by mkdir -p, as the user's.
not_private() {
	[ -e "$1" ] || return 1
	if [ ! -O "$1" ]; then
		why="$1 belongs to another user"
		return 0
	fi
	m=$(ls -ldL "$1" 2>/dev/null) || {
		why="the permissions of $1 cannot be read"
		return 0
	}
	case $m in
	d????w* | d???????w*)
		why="$1 can be written by other users (${m%% *})"
		return 0
		;;
	esac
	return 1
}
