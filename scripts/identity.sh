# shellcheck shell=bash
# The sender's identity for make prep/send. Sourced after lib.sh.
#
# The series files carry one role identity (PATCH_AUTHOR's default, an
# example.invalid address). Whoever sends puts their own name on the
# messages: SENDER="Name <mail>", else PATCH_AUTHOR when it was set to
# someone, else git's own user.name and user.email (outside the tree,
# whose local identity is the role's).

ROLE_AUTHOR='Kernel Text Replication Maintainers <ktext-repl@example.invalid>'

# sender_identity: print the sender as "Name <mail>", or die when there is
# no real one.
sender_identity() {
	local who=${SENDER:-} name mail
	if [ -z "$who" ] && [ "$PATCH_AUTHOR" != "$ROLE_AUTHOR" ]; then
		who=$PATCH_AUTHOR
	fi
	if [ -z "$who" ]; then
		name=$(git config --global user.name 2>/dev/null || true)
		mail=$(git config --global user.email 2>/dev/null || true)
		if [ -n "$name" ] && [ -n "$mail" ]; then who="$name <$mail>"; fi
	fi
	[ -n "$who" ] ||
		die "no sender: set SENDER=\"Your Name <you@example.org>\" (or PATCH_AUTHOR, or git config --global user.name/user.email); the messages go out under the sender's name, never the role's"
	printf '%s' "$who" | grep -Eq '^[^<>]*[^<> ] <[^<>@ ]+@[^<>@ ]+\.[^<>@ ]+>$' ||
		die "sender '$who' is not 'Name <mail@domain>'"
	case "$who" in
	"$ROLE_AUTHOR") die "the sender is the role identity '$ROLE_AUTHOR': set SENDER to a person" ;;
	*'.invalid>') die "the sender '$who' has an .invalid address: set SENDER to a person" ;;
	esac
	printf '%s\n' "$who"
}

# stamp_identity GITDIR FROM BRANCH WHO: rewrite the commits FROM..BRANCH
# of the repository GITDIR with WHO as author and committer, and each
# "Signed-off-by: <the role>" as "Signed-off-by: WHO" (added if the
# commit has none of WHO's). Other trailers (credit: Co-developed-by,
# Suggested-by, Link) stay as they are; trees, order and author dates too.
stamp_identity() {
	local dir=$1 from=$2 branch=$3 who=$4 name mail parent c msg date
	name=${who% <*}
	mail=${who##*<}
	mail=${mail%>}
	parent=$(git -C "$dir" rev-parse "$from")
	for c in $(git -C "$dir" rev-list --reverse "$from..$branch"); do
		msg=$(git -C "$dir" log -1 --format=%B "$c" |
			sed "s/^Signed-off-by: $(printf '%s' "$ROLE_AUTHOR" | sed 's/[][\.*^$/]/\\&/g')\$/Signed-off-by: $who/" |
			git -C "$dir" interpret-trailers --if-exists addIfDifferent --trailer "Signed-off-by: $who")
		date=$(git -C "$dir" log -1 --format=%aD "$c")
		parent=$(printf '%s\n' "$msg" |
			GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$mail GIT_AUTHOR_DATE=$date \
				GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$mail GIT_COMMITTER_DATE=$date \
				git -C "$dir" commit-tree "$c^{tree}" -p "$parent" -F -)
	done
	git -C "$dir" update-ref "refs/heads/$branch" "$parent"
}
