# sqlcheck.awk - tests/lint.sh "static": SQL in storage/*.c is parameterised.
# Usage: awk -f tests/sqlcheck.awk FILE.c; prints FILE:LINE: why for each
# violation and exits 1 when there is one.
#
# The rules, per storage/*.c (comments stripped, string literals kept):
#  - the SQL argument of db_exec, PQexecParams, PQexec, PQprepare and
#    PQsend* is a string literal, a concatenation of literals and macros
#    that are #defined as literals, a "static const char x[]" literal, the
#    migration file text m->sql (trusted by design), or a "const char *"
#    parameter of the enclosing function; that function is then a wrapper
#    and its own call sites are checked by the same rules;
#  - the parameter count passed is a constant equal to the highest $N in
#    the literal (0 when none), and parameters are not NULL when $N is used;
#  - no sprintf, vsprintf, strcat, strncat, strcpy, stpcpy, asprintf in
#    storage; snprintf only formats values (its format has no SQL keyword).
function die(pos, msg) { print FILENAME ":" lineof(pos) ": " msg; bad++ }
function lineof(pos,   k, l) { l = 1; for (k = 1; k <= nl; k++) if (nlpos[k] < pos) l++; else break; return l }
function trim(s) { gsub(/^[ \t\n]+|[ \t\n]+$/, "", s); return s }
# The balanced "(...)" at code position p: ARGS[1..NARGS]; returns its end.
function args(p,   depth, i, c, s, q, cur) {
	depth = 0; NARGS = 0; cur = ""
	for (i = p; i <= length(code); i++) {
		c = substr(code, i, 1)
		if (c == "\"" || c == "'") {
			q = c; s = c; i++
			while (i <= length(code)) { c = substr(code, i, 1); s = s c
				if (c == "\\") { i++; s = s substr(code, i, 1) } else if (c == q) break
				i++ }
			cur = cur s; continue
		}
		if (c == "(") { depth++; if (depth == 1) continue }
		if (c == ")") { depth--; if (depth == 0) { ARGS[++NARGS] = trim(cur); return i } }
		if (c == "," && depth == 1) { ARGS[++NARGS] = trim(cur); cur = ""; continue }
		cur = cur c
	}
	return length(code)
}
# "lit" (literals and literal macros, text in LIT), "id" or "expr".
function sqlkind(a,   rest, t, q) {
	LIT = ""; rest = a
	while (rest != "") {
		rest = trim(rest)
		if (substr(rest, 1, 1) == "\"") {
			q = 2
			while (q <= length(rest) && substr(rest, q, 1) != "\"") { if (substr(rest, q, 1) == "\\") q++; q++ }
			LIT = LIT substr(rest, 2, q - 2); rest = substr(rest, q + 1); continue
		}
		if (match(rest, /^[A-Za-z_][A-Za-z_0-9]*/)) {
			t = substr(rest, 1, RLENGTH)
			if (t in strmacro) { LIT = LIT strmacro[t]; rest = substr(rest, RLENGTH + 1); continue }
			if (RLENGTH == length(rest) && LIT == "") return "id"
			return "expr"
		}
		return "expr"
	}
	return "lit"
}
function maxdollar(s,   m, v) {
	m = 0
	while (match(s, /\$[0-9]+/)) { v = substr(s, RSTART + 1, RLENGTH - 1) + 0; if (v > m) m = v; s = substr(s, RSTART + RLENGTH) }
	return m
}
# One call at pos: SQL is argument si, its count ni (0: none), params pi.
function check(pos, name, si, ni, pi,   k, m, found, plist, idx, seg, lastseg, wname) {
	if (ARGS[si] in trusted) return
	k = sqlkind(ARGS[si])
	if (k == "lit") {
		m = maxdollar(LIT)
		if (ni == 0) { if (m > 0) die(pos, name ": $" m " placeholder but no parameters are passed") }
		else if (ARGS[ni] !~ /^[0-9]+$/) die(pos, name ": parameter count \"" ARGS[ni] "\" is not a constant")
		else if (ARGS[ni] + 0 != m) die(pos, name ": passes " ARGS[ni] " parameters for SQL using $1..$" m)
		else if (m > 0 && pi && ARGS[pi] == "NULL") die(pos, name ": $" m " placeholders with NULL parameters")
		return
	}
	if (k == "id") {
		found = ""; plist = substr(code, 1, pos)
		while (match(plist, /[A-Za-z_][A-Za-z_0-9]*\([^(){};]*const char \*[A-Za-z_][A-Za-z_0-9]*[,)][^(){};]*\)[ \t\n]*\{/)) {
			seg = substr(plist, RSTART, RLENGTH); plist = substr(plist, RSTART + RLENGTH)
			if (seg ~ ("const char \\*" ARGS[si] "[,)]")) { lastseg = seg; found = "y" }
		}
		if (found == "") { die(pos, name ": SQL from variable \"" ARGS[si] "\" that is not a parameter"); return }
		match(lastseg, /^[A-Za-z_][A-Za-z_0-9]*/); wname = substr(lastseg, 1, RLENGTH)
		plist = substr(lastseg, RLENGTH + 2); idx = 1
		while (plist !~ ("^[ \t\n]*const char \\*" ARGS[si] "[,)]")) { sub(/^[^,]*,/, "", plist); if (++idx > 20) break }
		wrap_si[wname] = idx; wrap_ni[wname] = (ni ? idx + 1 : 0)
		return
	}
	die(pos, name ": SQL is an expression, not a constant: " substr(ARGS[si], 1, 80))
}
{
	line = $0
	if (cont) macrobody = macrobody " " line
	else if (line ~ /^#define[ \t]+[A-Za-z_][A-Za-z_0-9]*[ \t]+("|\\$)/) macrobody = line
	else macrobody = ""
	cont = (macrobody != "" && line ~ /\\$/)
	if (macrobody != "" && !cont) {
		t = macrobody; sub(/^#define[ \t]+/, "", t); mname = t; sub(/[ \t].*/, "", mname)
		sub(/^[A-Za-z_][A-Za-z_0-9]*/, "", t); body = ""
		while (match(t, /"([^"\\]|\\.)*"/)) { body = body substr(t, RSTART + 1, RLENGTH - 2); t = substr(t, RSTART + RLENGTH) }
		strmacro[mname] = body; macrobody = ""
	}
	if (line ~ /^static const char [A-Za-z_][A-Za-z_0-9]*\[\] =/) { t = line; sub(/^static const char /, "", t); sub(/\[.*/, "", t); trusted[t] = 1 }
	out = ""
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (incomment) { if (substr(line, i, 2) == "*/") { incomment = 0; i++ } continue }
		if (substr(line, i, 2) == "/*") { incomment = 1; i++; continue }
		if (substr(line, i, 2) == "//") break
		if (c == "\"" || c == "'") {
			q = c; out = out c
			for (i++; i <= length(line); i++) { c = substr(line, i, 1); out = out c
				if (c == "\\") { i++; out = out substr(line, i, 1) } else if (c == q) break }
			continue
		}
		out = out c
	}
	code = code out "\n"; nlpos[++nl] = length(code)
}
END {
	trusted["m->sql"] = 1
	rest = code; off = 0
	while (match(rest, /(^|[^A-Za-z_0-9])(db_exec|PQexecParams|PQexec|PQprepare|PQsendQuery|PQsendQueryParams|PQsendPrepare)[ \t\n]*\(/)) {
		name = substr(rest, RSTART, RLENGTH); sub(/^[^A-Za-z_]/, "", name); sub(/[ \t\n]*\($/, "", name)
		p = off + RSTART + RLENGTH - 1
		args(p)
		if (ARGS[1] ~ /^(struct|const|PGconn|int) /) { }
		else if (name == "db_exec") check(p, name, 2, 3, 4)
		else if (name == "PQexecParams" || name == "PQsendQueryParams") check(p, name, 2, 3, 5)
		else if (name == "PQexec" || name == "PQsendQuery") check(p, name, 2, 0, 0)
		else check(p, name, 3, 4, 0)
		off = p; rest = substr(code, off + 1)
	}
	for (w in wrap_si) {
		rest = code; off = 0
		while (match(rest, "(^|[^A-Za-z_0-9])" w "[ \t\n]*\\(")) {
			p = off + RSTART + RLENGTH - 1
			args(p)
			if (ARGS[1] !~ /^(struct|const|PGconn|int) /) check(p, w, wrap_si[w], wrap_ni[w], wrap_ni[w] ? wrap_ni[w] + 1 : 0)
			off = p; rest = substr(code, off + 1)
		}
	}
	rest = code; off = 0
	while (match(rest, /(^|[^A-Za-z_0-9])(sprintf|vsprintf|strcat|strncat|strcpy|stpcpy|asprintf|vasprintf)[ \t\n]*\(/)) {
		p = off + RSTART + RLENGTH - 1
		name = substr(rest, RSTART, RLENGTH - 1); sub(/^[^A-Za-z_]/, "", name)
		die(p, "string building with " name "()")
		off = p; rest = substr(code, off + 1)
	}
	rest = code; off = 0
	while (match(rest, /(^|[^A-Za-z_0-9])v?snprintf[ \t\n]*\(/)) {
		p = off + RSTART + RLENGTH - 1
		args(p)
		if (sqlkind(ARGS[3]) == "lit" && LIT ~ /(SELECT|INSERT|UPDATE|DELETE|WHERE|FROM|VALUES|INTO|ALTER|DROP|CREATE|TRUNCATE|GRANT|ORDER BY|UNION|JOIN)[ (]/)
			die(p, "snprintf formats SQL: \"" substr(LIT, 1, 60) "\"")
		off = p; rest = substr(code, off + 1)
	}
	exit bad > 0
}
