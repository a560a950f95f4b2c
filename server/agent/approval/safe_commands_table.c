/*
 * The known-safe programs and, for each, every option it may be given without asking
 * (safe_commands_int.h has the notation). The rule for adding a spelling: the option only
 * changes what is read or how it is printed on stdout; it never writes a file, runs a program,
 * or names an output. Options a program has but that are left out here (tail -f and --pid:
 * they wait forever; wc --files0-from; grep and ls long forms not listed) simply make the
 * command ask. Checked against GNU coreutils 9.1, grep 3.8, findutils 4.9, util-linux 2.38
 * (rev), debianutils (which) and ripgrep 13/14.
 *
 * Left out on purpose, as upstream leaves them out: base64 -o/--output (writes), rg --pre,
 * --pre-glob, --hostname-bin (run programs) and -z/--search-zip (runs decompressors), find
 * -exec -execdir -ok -okdir -delete -fls -fprint -fprint0 -fprintf; and, stricter than
 * upstream, uniq takes one operand at most (uniq IN OUT writes OUT) and sed's file may not
 * read as an option (sed -n 1p --expression=...).
 */
#include <string.h>

#include "safe_commands_int.h"

static const struct sc_spec sc_specs[] = {
	{"base64", SC_GETOPT, "-d -i -w= --decode --ignore-garbage --wrap=", 1, 0},
	{"cat", SC_GETOPT,
		"-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number "
		"--squeeze-blank --show-tabs --show-nonprinting",
		-1, 0},
	{"cd", SC_GETOPT, "-L -P", 1, 0},
	{"cut", SC_GETOPT,
		"-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= "
		"--complement --only-delimited --output-delimiter= --zero-terminated",
		-1, 0},
	{"echo", SC_TEXT, NULL, -1, 0},
	{"expr", SC_TEXT, NULL, -1, 0},
	{"false", SC_TEXT, NULL, -1, 0},
	{"find", SC_FIND,
		"-name= -iname= -path= -ipath= -wholename= -iwholename= -lname= -ilname= -regex= "
		"-iregex= -regextype= -type= -xtype= -size= -mtime= -mmin= -atime= -amin= -ctime= "
		"-cmin= -newer= -anewer= -cnewer= -used= -perm= -user= -group= -uid= -gid= -links= "
		"-inum= -samefile= -maxdepth= -mindepth= -fstype= -context= -printf= -print -print0 "
		"-ls -prune -quit -empty -true -false -readable -writable -executable -nouser "
		"-nogroup -depth -d -mount -xdev -noleaf -follow -daystart -ignore_readdir_race "
		"-noignore_readdir_race -warn -nowarn -not -a -and -o -or -help -version ! ( ) ,",
		-1, 0},
	{"grep", SC_GETOPT,
		"-E -F -G -P -e= -f= -i -y -v -w -x -c -L -l -o -q -s -b -H -h -n -T -Z -z -a -I -r "
		"-R -U -m= -A= -B= -C= -d= -D= --extended-regexp --fixed-strings --basic-regexp "
		"--perl-regexp --regexp= --file= --ignore-case --no-ignore-case --word-regexp "
		"--line-regexp --null-data --no-messages --invert-match --max-count= --byte-offset "
		"--line-number --line-buffered --with-filename --no-filename --label= "
		"--only-matching --quiet --silent --binary-files= --text --directories= --devices= "
		"--recursive --dereference-recursive --include= --exclude= --exclude-from= "
		"--exclude-dir= --files-without-match --files-with-matches --count --initial-tab "
		"--null --before-context= --after-context= --context= --color[=] --colour[=]",
		-1, SC_DIGITS},
	{"head", SC_GETOPT,
		"-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated",
		-1, SC_DIGITS},
	{"id", SC_GETOPT,
		"-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero",
		-1, 0},
	{"ls", SC_GETOPT,
		"-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -I= -k -l -L -m -n -N -o -p -q -Q -r "
		"-R -s -S -t -T= -u -U -v -w= -x -X -Z -1 --all --almost-all --author --escape "
		"--block-size= --ignore-backups --color[=] --directory --dired --classify[=] "
		"--file-type --format= --full-time --group-directories-first --no-group "
		"--human-readable --si --dereference-command-line "
		"--dereference-command-line-symlink-to-dir --hide= --hyperlink[=] "
		"--indicator-style= --inode --ignore= --kibibytes --dereference --numeric-uid-gid "
		"--literal --hide-control-chars --show-control-chars --quote-name --quoting-style= "
		"--reverse --recursive --size --sort= --time= --time-style= --tabsize= --width= "
		"--context --zero",
		-1, 0},
	{"nl", SC_GETOPT,
		"-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter= "
		"--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= "
		"--number-format= --no-renumber --number-separator= --starting-line-number= "
		"--number-width=",
		-1, 0},
	{"numfmt", SC_GETOPT,
		"-d= -z --debug --delimiter= --field= --format= --from= --from-unit= --grouping "
		"--header[=] --invalid= --padding= --round= --suffix= --to= --to-unit= "
		"--zero-terminated",
		-1, 0},
	{"paste", SC_GETOPT, "-d= -s -z --delimiters= --serial --zero-terminated", -1, 0},
	{"pwd", SC_GETOPT, "-L -P", 0, 0},
	{"rev", SC_GETOPT, "-0 --zero -h -V", -1, 0},
	{"rg", SC_GETOPT,
		"-a -b -c -F -H -h -i -I -l -L -n -N -o -p -q -s -S -u -U -v -V -w -x -0 -. -e= -f= "
		"-g= -t= -T= -A= -B= -C= -m= -d= -j= -M= -r= -E= --text --byte-offset --count "
		"--count-matches --fixed-strings --with-filename --no-filename --ignore-case "
		"--files-with-matches --files-without-match --follow --line-number "
		"--no-line-number --only-matching --pretty --quiet --case-sensitive --smart-case "
		"--unrestricted --multiline --multiline-dotall --invert-match --word-regexp "
		"--line-regexp --null --null-data --hidden --no-hidden --column --no-column "
		"--heading --no-heading --files --type-list --json --vimgrep --stats --trim "
		"--no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-parent --no-ignore-global "
		"--no-ignore-exclude --no-ignore-files --no-messages --one-file-system --passthru "
		"--no-config --binary --crlf --pcre2 --glob-case-insensitive --max-columns-preview "
		"--line-buffered --block-buffered --sort= --sortr= --color= --colors= --regexp= "
		"--file= --glob= --iglob= --type= --type-not= --type-add= --after-context= "
		"--before-context= --context= --max-count= --max-depth= --threads= "
		"--max-columns= --max-filesize= --replace= --encoding= --engine= "
		"--context-separator= --field-match-separator= --field-context-separator= "
		"--path-separator= --ignore-file=",
		-1, 0},
	{"sed", SC_SED, NULL, 1, 0},
	{"seq", SC_GETOPT, "-f= -s= -w --format= --separator= --equal-width", -1, SC_NEGNUM},
	{"stat", SC_GETOPT,
		"-L -f -t -c= --dereference --file-system --format= --printf= --terse --cached=",
		-1, 0},
	{"tac", SC_GETOPT, "-b -r -s= --before --regex --separator=", -1, 0},
	{"tail", SC_GETOPT,
		"-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated",
		-1, SC_DIGITS},
	{"tr", SC_GETOPT, "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1",
		-1, 0},
	{"true", SC_TEXT, NULL, -1, 0},
	{"uname", SC_GETOPT,
		"-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release "
		"--kernel-version --machine --processor --hardware-platform --operating-system",
		0, 0},
	{"uniq", SC_GETOPT,
		"-c -d -D -f= -i -s= -u -w= -z --all-repeated[=] --group[=] --count --repeated "
		"--skip-fields= --ignore-case --skip-chars= --unique --zero-terminated "
		"--check-chars=",
		1, 0},
	{"wc", SC_GETOPT,
		"-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total=", -1, 0},
	{"which", SC_GETOPT, "-a -s", -1, 0},
	{"whoami", SC_GETOPT, "", 0, 0},
};

const struct sc_spec *
safe_commands_spec(const char *name)
{
	for (size_t i = 0; i < sizeof(sc_specs) / sizeof(sc_specs[0]); i++)
		if (strcmp(sc_specs[i].name, name) == 0)
			return &sc_specs[i];
	return NULL;
}
