/*
 * The allowlists of the known-safe programs as the tests expect them, spelled as
 * server/agent/approval/safe_commands_int.h says: a change to what runs without asking has to be
 * made here too (test_safe_commands_spellings compares both, spelling by spelling).
 */
#ifndef SAFE_COMMANDS_GOLDEN_H
#define SAFE_COMMANDS_GOLDEN_H

enum golden_form { G_GETOPT, G_TEXT, G_FIND, G_SED };

struct golden {
	const char *name;
	enum golden_form form;
	const char *allow;
	int max_operands; /* -1: any */
	int digits;	  /* digits are options in a cluster */
	int negnum;	  /* -1 is a number operand */
};

static const struct golden golden[] = {

	{"base64", G_GETOPT, "-d -i -w= --decode --ignore-garbage --wrap=", 1, 0, 0},
	{"cat", G_GETOPT,
		"-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number "
		"--squeeze-blank --show-tabs --show-nonprinting",
		-1, 0, 0},
	{"cd", G_GETOPT, "-L -P", 1, 0, 0},
	{"cut", G_GETOPT,
		"-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= "
		"--complement --only-delimited --output-delimiter= --zero-terminated",
		-1, 0, 0},
	{"echo", G_TEXT, NULL, -1, 0, 0},
	{"expr", G_TEXT, NULL, -1, 0, 0},
	{"false", G_TEXT, NULL, -1, 0, 0},
	{"find", G_FIND,
		"-name= -iname= -path= -ipath= -wholename= -iwholename= -lname= -ilname= -regex= "
		"-iregex= -regextype= -type= -xtype= -size= -mtime= -mmin= -atime= -amin= -ctime= "
		"-cmin= -newer= -anewer= -cnewer= -used= -perm= -user= -group= -uid= -gid= -links= "
		"-inum= -samefile= -maxdepth= -mindepth= -fstype= -context= -printf= -print -print0 "
		"-ls -prune -quit -empty -true -false -readable -writable -executable -nouser "
		"-nogroup -depth -d -mount -xdev -noleaf -follow -daystart -ignore_readdir_race "
		"-noignore_readdir_race -warn -nowarn -not -a -and -o -or -help -version ! ( ) ,",
		-1, 0, 0},
	{"grep", G_GETOPT,
		"-E -F -G -P -e= -f= -i -y -v -w -x -c -L -l -o -q -s -b -H -h -n -T -Z -z -a -I -r "
		"-R -U -m= -A= -B= -C= -d= -D= --extended-regexp --fixed-strings --basic-regexp "
		"--perl-regexp --regexp= --file= --ignore-case --no-ignore-case --word-regexp "
		"--line-regexp --null-data --no-messages --invert-match --max-count= --byte-offset "
		"--line-number --line-buffered --with-filename --no-filename --label= "
		"--only-matching --quiet --silent --binary-files= --text --directories= --devices= "
		"--recursive --dereference-recursive --include= --exclude= --exclude-from= "
		"--exclude-dir= --files-without-match --files-with-matches --count --initial-tab "
		"--null --before-context= --after-context= --context= --color[=] --colour[=]",
		-1, 1, 0},
	{"head", G_GETOPT,
		"-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated",
		-1, 1, 0},
	{"id", G_GETOPT,
		"-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero",
		-1, 0, 0},
	{"ls", G_GETOPT,
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
		-1, 0, 0},
	{"nl", G_GETOPT,
		"-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter= "
		"--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= "
		"--number-format= --no-renumber --number-separator= --starting-line-number= "
		"--number-width=",
		-1, 0, 0},
	{"numfmt", G_GETOPT,
		"-d= -z --debug --delimiter= --field= --format= --from= --from-unit= --grouping "
		"--header[=] --invalid= --padding= --round= --suffix= --to= --to-unit= "
		"--zero-terminated",
		-1, 0, 0},
	{"paste", G_GETOPT, "-d= -s -z --delimiters= --serial --zero-terminated", -1, 0, 0},
	{"pwd", G_GETOPT, "-L -P", 0, 0, 0},
	{"rev", G_GETOPT, "-0 --zero -h -V", -1, 0, 0},
	{"rg", G_GETOPT,
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
		-1, 0, 0},
	{"sed", G_SED, NULL, 1, 0, 0},
	{"seq", G_GETOPT, "-f= -s= -w --format= --separator= --equal-width", -1, 0, 1},
	{"stat", G_GETOPT,
		"-L -f -t -c= --dereference --file-system --format= --printf= --terse --cached=",
		-1, 0, 0},
	{"tac", G_GETOPT, "-b -r -s= --before --regex --separator=", -1, 0, 0},
	{"tail", G_GETOPT,
		"-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated",
		-1, 1, 0},
	{"tr", G_GETOPT, "-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1",
		-1, 0, 0},
	{"true", G_TEXT, NULL, -1, 0, 0},
	{"uname", G_GETOPT,
		"-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release "
		"--kernel-version --machine --processor --hardware-platform --operating-system",
		0, 0, 0},
	{"uniq", G_GETOPT,
		"-c -d -D -f= -i -s= -u -w= -z --all-repeated[=] --group[=] --count --repeated "
		"--skip-fields= --ignore-case --skip-chars= --unique --zero-terminated "
		"--check-chars=",
		1, 0, 0},
	{"wc", G_GETOPT,
		"-c -m -l -L -w --bytes --chars --lines --max-line-length --words --total=", -1, 0,
		0},
	{"which", G_GETOPT, "-a -s", -1, 0, 0},
	{"whoami", G_GETOPT, "", 0, 0, 0},
};

#endif
