/*
 * yaml.c - the libyaml boundary (see ydoc.h).  libyaml's document API parses; this file copies
 * its node graph into nopi_ynode trees with 1-based positions and frees libyaml's state at
 * once, so no libyaml type or 0-based mark leaves this file.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ydoc.h"

/* Deeper nesting than any manifest needs; and more bytes than any manifest or profile has. */
#define MAX_DEPTH 64
#define MAX_BYTES ((size_t)1 << 20)

struct nopi_ydoc {
    char *path;
    nopi_ynode *root;
    /* every node and string is owned by these arenas-by-list */
    nopi_ynode **nodes;
    size_t nnodes, capnodes;
};

static nopi_ynode *new_node(nopi_ydoc *doc)
{
    if (doc->nnodes == doc->capnodes) {
        size_t cap = doc->capnodes ? doc->capnodes * 2 : 32;
        nopi_ynode **nodes = realloc(doc->nodes, cap * sizeof *nodes);
        if (!nodes)
            return NULL;
        doc->nodes = nodes;
        doc->capnodes = cap;
    }
    nopi_ynode *n = calloc(1, sizeof *n);
    if (n)
        doc->nodes[doc->nnodes++] = n;
    return n;
}

/* Refuses nesting deeper than MAX_DEPTH at the node that goes past it. */
static int too_deep(const char *path, yaml_mark_t m, nop_error *err)
{
    nopi_fail(err, NOP_ERR_INPUT, path, (int)m.line + 1, (int)m.column + 1,
              "nesting deeper than %d levels (or a recursive alias)", MAX_DEPTH);
    nopi_detail(err, "a manifest needs a few levels: look for brackets left open, or an "
                "alias used inside its own anchor");
    return -1;
}

static nopi_ynode *convert(nopi_ydoc *doc, yaml_document_t *ydoc, yaml_node_t *y, int depth,
                           nop_error *err)
{
    if (depth > MAX_DEPTH) {
        too_deep(doc->path, y->start_mark, err);
        return NULL;
    }
    nopi_ynode *n = new_node(doc);
    if (!n) {
        nopi_fail(err, NOP_ERR_NOMEM, doc->path, 0, 0, "out of memory reading YAML");
        return NULL;
    }
    n->line = (int)y->start_mark.line + 1;
    n->col = (int)y->start_mark.column + 1;
    switch (y->type) {
    case YAML_SCALAR_NODE:
        n->kind = NOPI_Y_SCALAR;
        n->plain = y->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        n->str = strndup((const char *)y->data.scalar.value, y->data.scalar.length);
        if (!n->str)
            return nopi_nomem(err), NULL;
        return n;
    case YAML_SEQUENCE_NODE: {
        n->kind = NOPI_Y_SEQ;
        yaml_node_item_t *it = y->data.sequence.items.start;
        n->n = (size_t)(y->data.sequence.items.top - it);
        n->items = calloc(n->n ? n->n : 1, sizeof *n->items);
        if (!n->items)
            return nopi_nomem(err), NULL;
        for (size_t i = 0; i < n->n; i++) {
            n->items[i] = convert(doc, ydoc, yaml_document_get_node(ydoc, it[i]), depth + 1, err);
            if (!n->items[i])
                return NULL;
        }
        return n;
    }
    case YAML_MAPPING_NODE: {
        n->kind = NOPI_Y_MAP;
        yaml_node_pair_t *p = y->data.mapping.pairs.start;
        n->n = (size_t)(y->data.mapping.pairs.top - p);
        n->items = calloc(n->n ? 2 * n->n : 1, sizeof *n->items);
        if (!n->items)
            return nopi_nomem(err), NULL;
        for (size_t i = 0; i < n->n; i++) {
            n->items[2 * i] = convert(doc, ydoc, yaml_document_get_node(ydoc, p[i].key),
                                      depth + 1, err);
            if (!n->items[2 * i])
                return NULL;
            n->items[2 * i + 1] = convert(doc, ydoc, yaml_document_get_node(ydoc, p[i].value),
                                          depth + 1, err);
            if (!n->items[2 * i + 1])
                return NULL;
        }
        return n;
    }
    default:
        return nopi_fail(err, NOP_ERR_INPUT, doc->path, n->line, n->col,
                         "unsupported YAML node"), NULL;
    }
}

/* Refuses, at its line and column, the first alias (*name) in text: a manifest or profile
 * never needs one, and each use of an alias is copied again, so nested aliases of a few
 * hundred bytes would expand exponentially ("billion laughs"); a second document, which
 * yaml_parser_load would leave unread without a word; and any tag (!!str, !foo): the
 * typed getters read a scalar by its text and quoting, so a tag would be ignored, and
 * `!!str 4096` would be a number, `!!int '4096'` a string.  One rule for every tag, core
 * or not, on every node.  And nesting deeper than MAX_DEPTH, here where the events come
 * rather than after yaml_parser_load, whose time grows with the square of the depth (a
 * 400 KB manifest of '[' took minutes).  A syntax error ends the scan quietly:
 * yaml_parser_load reports it, with its usual message. */
static int refuse_aliases_tags_and_documents(const char *path, const char *text, size_t len,
                                              nop_error *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return nopi_nomem(err);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0, documents = 0, depth = 0;
    for (bool more = true; more && rc == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev))
            break;
        more = ev.type != YAML_STREAM_END_EVENT;
        if (ev.type == YAML_DOCUMENT_START_EVENT && documents++ > 0) {
            rc = nopi_fail(err, NOP_ERR_INPUT, path, (int)ev.start_mark.line + 1,
                           (int)ev.start_mark.column + 1, "a second YAML document: the file "
                           "must be one document");
            nopi_detail(err, "remove the '---' line and what follows it, or merge the two");
        }
        const char *tag = ev.type == YAML_SCALAR_EVENT ? (const char *)ev.data.scalar.tag
                        : ev.type == YAML_SEQUENCE_START_EVENT
                        ? (const char *)ev.data.sequence_start.tag
                        : ev.type == YAML_MAPPING_START_EVENT
                        ? (const char *)ev.data.mapping_start.tag : NULL;
        if (tag && rc == 0) {
            /* libyaml gives the tag resolved: !!str is tag:yaml.org,2002:str */
            static const char core[] = "tag:yaml.org,2002:";
            bool is_core = strncmp(tag, core, sizeof core - 1) == 0;
            rc = nopi_fail(err, NOP_ERR_INPUT, path, (int)ev.start_mark.line + 1,
                           (int)ev.start_mark.column + 1, "YAML tags ('%s%s') are not "
                           "supported", is_core ? "!!" : "", is_core ? tag + sizeof core - 1
                                                                      : tag);
            nopi_detail(err, "remove the tag: a value's type is the one its key takes (quote "
                        "a value to keep it a string)");
        }
        /* a node's depth as convert counts it: the collections it is in */
        bool node = ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT ||
                    ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT;
        if (node && depth > MAX_DEPTH && rc == 0)
            rc = too_deep(path, ev.start_mark, err);
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
            depth--;
        if (ev.type == YAML_ALIAS_EVENT && rc == 0) {
            rc = nopi_fail(err, NOP_ERR_INPUT, path, (int)ev.start_mark.line + 1,
                           (int)ev.start_mark.column + 1, "YAML aliases ('*%s') are not "
                           "supported", (const char *)ev.data.alias.anchor);
            nopi_detail(err, "write the value out where the alias stands");
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}

/* The 0-based line and column of byte offset in text, as libyaml counts them: a line ends
 * at LF, CR or CRLF; a column is a character (not a UTF-8 continuation byte), and a byte
 * order mark at the start is none. */
static yaml_mark_t mark_at(const char *text, size_t len, size_t offset)
{
    yaml_mark_t m = { offset, 0, 0 };
    size_t i = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    for (; i < offset && i < len; i++) {
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n')))
            m.line++, m.column = 0;
        else if (text[i] != '\r' && ((unsigned char)text[i] & 0xc0) != 0x80)
            m.column++;
    }
    return m;
}

/* What a new user's libyaml error most likely means (a new user's finds: a tab, and a key
 * without its ':', were libyaml's words alone). */
static void yaml_hint(const char *text, size_t len, const yaml_parser_t *parser, yaml_mark_t m,
                      nop_error *err)
{
    /* libyaml's marks count characters, not bytes (a reviewer's find: after an 'é' or a
     * byte order mark the index named another byte): the line, then its characters */
    size_t start = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    for (size_t l = 0; l < m.line && start < len; l++) {
        const char *nl = memchr(text + start, '\n', len - start);
        start = nl ? (size_t)(nl - text) + 1 : len;
    }
    size_t at = start;
    for (size_t c = 0; c < m.column && at < len && text[at] != '\n'; c++)
        for (at++; at < len && ((unsigned char)text[at] & 0xc0) == 0x80; at++)
            ;
    if (at < len && text[at] == '\t') {
        nopi_detail(err, "that is a tab: YAML indents with spaces only");
        return;
    }
    if (!parser->problem || strcmp(parser->problem, "mapping values are not allowed in this "
                                   "context") != 0 || start == 0 || start > len)
        return;
    /* "name kops" then "ops:": libyaml reads one plain scalar over both lines, and stops at
     * the second's ':' (the first ':' of the problem's line, on a line after one that is not
     * blank, holds no ':' and is no comment) */
    size_t end = start - 1, prev = end;
    while (prev > 0 && text[prev - 1] != '\n')
        prev--;
    bool blank = strspn(text + prev, " \t\r") >= end - prev;
    if (!blank && !memchr(text + prev, ':', end - prev) && !memchr(text + prev, '#', end - prev) &&
        !memchr(text + start, ':', at - start))
        nopi_detail(err, "is a ':' missing on line %d? a key and its value are 'key: value'",
                    (int)m.line);
}

int nopi_yaml_load(nopi_ydoc **out, const char *path, nop_error *err)
{
    *out = NULL;
    char *text;
    size_t len;
    if (nopi_read_input(path, "YAML file", MAX_BYTES, &text, &len, err) != 0)
        return -1;
    nopi_ydoc *doc = calloc(1, sizeof *doc);
    if (!doc || !(doc->path = strdup(path))) {
        free(text);
        free(doc);
        return nopi_nomem(err);
    }
    yaml_parser_t parser;
    yaml_document_t ydoc;
    int rc = -1;
    if (refuse_aliases_tags_and_documents(path, text, len, err) != 0)
        goto out_text;
    if (!yaml_parser_initialize(&parser)) {
        nopi_nomem(err);
        goto out_text;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &ydoc)) {
        /* libyaml marks are 0-based; problem_mark is where it noticed, but a reader error
         * (a byte that is not UTF-8, a NUL) gives only its offset */
        yaml_mark_t m = parser.problem_mark;
        if (parser.error == YAML_READER_ERROR)
            m = mark_at(text, len, parser.problem_offset);
        if (parser.context) {
            nopi_fail(err, NOP_ERR_INPUT, path, (int)m.line + 1, (int)m.column + 1,
                      "invalid YAML: %s %s", parser.problem, parser.context);
            /* where what it was parsing began: an unclosed '[' is lines above the problem */
            const char *what = parser.context;
            if (strncmp(what, "while parsing a ", 16) == 0 &&
                parser.context_mark.line != m.line)
                nopi_detail(err, "the %s began at %s:%d:%d", what + 16, path,
                            (int)parser.context_mark.line + 1,
                            (int)parser.context_mark.column + 1);
        } else
            nopi_fail(err, NOP_ERR_INPUT, path, (int)m.line + 1, (int)m.column + 1,
                      "invalid YAML: %s", parser.problem ? parser.problem : "parse error");
        yaml_hint(text, len, &parser, m, err);
        goto out_parser;
    }
    yaml_node_t *root = yaml_document_get_root_node(&ydoc);
    rc = 0;
    if (root && !(doc->root = convert(doc, &ydoc, root, 0, err)))
        rc = -1;
    yaml_document_delete(&ydoc);
out_parser:
    yaml_parser_delete(&parser);
out_text:
    free(text);
    if (rc == 0)
        *out = doc;
    else
        nopi_yaml_free(doc);
    return rc;
}

void nopi_yaml_free(nopi_ydoc *doc)
{
    if (!doc)
        return;
    for (size_t i = 0; i < doc->nnodes; i++) {
        free((char *)doc->nodes[i]->str);
        free(doc->nodes[i]->items);
        free(doc->nodes[i]);
    }
    free(doc->nodes);
    free(doc->path);
    free(doc);
}

const nopi_ynode *nopi_yaml_root(const nopi_ydoc *doc)
{
    return doc->root;
}

const char *nopi_yaml_path(const nopi_ydoc *doc)
{
    return doc->path;
}

const nopi_ynode *nopi_y_key(const nopi_ynode *map, size_t i)
{
    return map->items[2 * i];
}

const nopi_ynode *nopi_y_value(const nopi_ynode *map, size_t i)
{
    return map->items[2 * i + 1];
}

const nopi_ynode *nopi_y_lookup(const nopi_ynode *map, const char *key)
{
    if (!map || map->kind != NOPI_Y_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++) {
        const nopi_ynode *k = nopi_y_key(map, i);
        if (k->kind == NOPI_Y_SCALAR && strcmp(k->str, key) == 0)
            return nopi_y_value(map, i);
    }
    return NULL;
}

int nopi_y_error(const nopi_ydoc *doc, const nopi_ynode *node, nop_error *err,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nopi_vfail(err, NOP_ERR_INPUT, doc->path, node ? node->line : 0, node ? node->col : 0,
               fmt, ap);
    va_end(ap);
    return -1;
}

static const char *kind_name(nopi_ykind k)
{
    return k == NOPI_Y_SEQ ? "a list" : k == NOPI_Y_MAP ? "a mapping" : "a scalar";
}

/* What the user wrote, for "must be X, not Y" messages. */
/* YAML's null: a plain scalar that is empty, ~ or null (YAML 1.2's core schema). */
static bool is_null(const nopi_ynode *n)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
    for (size_t i = 0; n->kind == NOPI_Y_SCALAR && n->plain && i < NOPI_ARRAY_LEN(nulls); i++)
        if (strcmp(n->str, nulls[i]) == 0)
            return true;
    return false;
}

static void describe(const nopi_ynode *n, char *buf, size_t size)
{
    if (n->kind != NOPI_Y_SCALAR)
        snprintf(buf, size, "%s", kind_name(n->kind));
    else if (is_null(n))
        snprintf(buf, size, "nothing (YAML's null)");
    else if (n->plain)
        snprintf(buf, size, "'%s'", n->str);
    else
        snprintf(buf, size, "the string \"%s\"", n->str);
}

int nopi_y_check_keys(const nopi_ydoc *doc, const nopi_ynode *map, const char *const *allowed,
                      const char *what, nop_error *err)
{
    size_t nallowed = 0;
    while (allowed[nallowed])
        nallowed++;
    for (size_t i = 0; i < map->n; i++) {
        const nopi_ynode *k = nopi_y_key(map, i);
        if (k->kind != NOPI_Y_SCALAR)
            return nopi_y_error(doc, k, err, "keys of the %s must be names, not %s", what,
                                kind_name(k->kind));
        for (size_t j = 0; j < i; j++) {
            const nopi_ynode *prev = nopi_y_key(map, j);
            if (prev->kind == NOPI_Y_SCALAR && strcmp(prev->str, k->str) == 0) {
                nopi_y_error(doc, k, err, "duplicate key '%s' in the %s", k->str, what);
                nopi_detail(err, "first given at line %d; keep one of the two", prev->line);
                return -1;
            }
        }
        bool known = false;
        for (size_t j = 0; j < nallowed && !known; j++)
            known = strcmp(allowed[j], k->str) == 0;
        if (!known) {
            const char *hint = nopi_closest(k->str, allowed, nallowed);
            if (hint)
                return nopi_y_error(doc, k, err, "unknown key '%s' in the %s; did you mean '%s'?",
                                    k->str, what, hint);
            nopi_y_error(doc, k, err, "unknown key '%s' in the %s", k->str, what);
            nopi_strbuf sb = NOPI_STRBUF_INIT;
            for (size_t j = 0; j < nallowed; j++)
                nopi_sb_printf(&sb, "%s%s", j ? ", " : "", allowed[j]);
            nopi_detail(err, "known keys: %s", sb.s ? sb.s : "");
            nopi_sb_free(&sb);
            return -1;
        }
    }
    return 0;
}

int nopi_y_expect(const nopi_ydoc *doc, const nopi_ynode *node, nopi_ykind kind,
                  const char *key, nop_error *err)
{
    if (node->kind == kind)
        return 0;
    char got[128];
    describe(node, got, sizeof got);
    nopi_y_error(doc, node, err, "'%s' must be %s, not %s", key, kind_name(kind), got);
    /* what to write instead, as neuronop.yaml(5) promises of every error (an auditor's
     * find: these said only what was wrong) */
    if (kind == NOPI_Y_SCALAR)
        nopi_detail(err, "write its value on its line: %s: VALUE", key);
    else if (kind == NOPI_Y_SEQ)
        nopi_detail(err, "write each item on a line of its own under '%s:', '  - ITEM', or "
                    "%s: [ITEM, ...]", key, key);
    else if (kind == NOPI_Y_MAP)
        nopi_detail(err, "write each of its keys on a line of its own, indented under '%s:'",
                    key);
    return -1;
}

int nopi_y_string(const nopi_ydoc *doc, const nopi_ynode *node, const char *key,
                  const char **out, nop_error *err)
{
    if (nopi_y_expect(doc, node, NOPI_Y_SCALAR, key, err) != 0)
        return -1;
    if (is_null(node))
        return nopi_y_error(doc, node, err, "'%s' must not be empty (YAML's null)", key);
    *out = node->str;
    return 0;
}

int nopi_y_bool(const nopi_ydoc *doc, const nopi_ynode *node, const char *key, bool *out,
                nop_error *err)
{
    /* YAML 1.2's booleans (its core schema), and no others: yes, on, y were 1.1's, and a
     * few of them taken, Yes and y not, said "true or false" wrongly (an auditor's find) */
    if (node->kind == NOPI_Y_SCALAR && node->plain) {
        static const char *const yes[] = { "true", "True", "TRUE" };
        static const char *const no[] = { "false", "False", "FALSE" };
        for (size_t i = 0; i < NOPI_ARRAY_LEN(yes); i++) {
            if (strcmp(node->str, yes[i]) == 0)
                return *out = true, 0;
            if (strcmp(node->str, no[i]) == 0)
                return *out = false, 0;
        }
    }
    char got[128];
    describe(node, got, sizeof got);
    nopi_y_error(doc, node, err, "'%s' must be true or false, not %s", key, got);
    static const char *const old[] = { "yes", "Yes", "YES", "on", "On", "ON", "y", "Y",
                                       "no", "No", "NO", "off", "Off", "OFF", "n", "N" };
    for (size_t i = 0; node->kind == NOPI_Y_SCALAR && i < NOPI_ARRAY_LEN(old); i++)
        if (strcmp(node->str, old[i]) == 0)
            nopi_detail(err, "write %s: YAML 1.2 reads '%s' as a string", i < 8 ? "true" : "false",
                        old[i]);
    return -1;
}

int nopi_y_int(const nopi_ydoc *doc, const nopi_ynode *node, const char *key, int64_t min,
               int64_t max, int64_t *out, nop_error *err)
{
    if (node->kind == NOPI_Y_SCALAR && node->plain && node->str[0]) {
        char *end;
        errno = 0;
        long long v = strtoll(node->str, &end, 0);
        if (*end == '\0' && errno == 0) {
            if (v < min || v > max)
                return nopi_y_error(doc, node, err,
                                    "'%s' is %lld, outside %lld..%lld", key, v,
                                    (long long)min, (long long)max);
            *out = v;
            return 0;
        }
    }
    char got[128];
    describe(node, got, sizeof got);
    return nopi_y_error(doc, node, err, "'%s' must be a whole number, not %s", key, got);
}

/* Whether node is a number that is no finite one: YAML's .inf, -.inf and .nan (any case
 * YAML allows), or what strtod reads as infinite or NaN (inf, nan, 1e999). */
static bool infinite_or_nan(const nopi_ynode *node)
{
    if (node->kind != NOPI_Y_SCALAR || !node->plain)
        return false;
    const char *p = node->str + (node->str[0] == '-' || node->str[0] == '+');
    static const char *const yaml[] = { ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN" };
    for (size_t i = 0; i < sizeof yaml / sizeof *yaml; i++)
        if (strcmp(p, yaml[i]) == 0)
            return true;
    char *end;
    double v = strtod(node->str, &end);
    return node->str[0] && *end == '\0' && !isfinite(v);
}

int nopi_y_double(const nopi_ydoc *doc, const nopi_ynode *node, const char *key, double min,
                  double max, double *out, nop_error *err)
{
    if (node->kind == NOPI_Y_SCALAR && node->plain && node->str[0]) {
        char *end;
        errno = 0;
        double v = strtod(node->str, &end);
        if (*end == '\0' && errno == 0 && isfinite(v)) {
            if (v < min || v > max)
                return nopi_y_error(doc, node, err, "'%s' is %g, outside %g..%g", key, v,
                                    min, max);
            *out = v;
            return 0;
        }
    }
    char got[128];
    describe(node, got, sizeof got);
    nopi_y_error(doc, node, err, "'%s' must be a %snumber, not %s", key,
                 infinite_or_nan(node) ? "finite " : "", got);
    nopi_detail(err, "write a number from %g to %g, such as %s: %g", min, max, key,
                min > 0 ? min : max < 1e-3 ? max : 1e-3);
    return -1;
}

int nopi_y_strings(const nopi_ydoc *doc, const nopi_ynode *node, const char *key,
                   const nopi_ynode ***items, size_t *n, nop_error *err)
{
    if (node->kind == NOPI_Y_SCALAR && !(node->plain && node->str[0] == '\0')) {
        nopi_y_error(doc, node, err, "'%s' must be a list, not '%s'", key, node->str);
        nopi_detail(err, "write %s: [%s]", key, node->str);
        return -1;
    }
    if (node->kind == NOPI_Y_SCALAR) {      /* `key:` with nothing after it: an empty list */
        *items = NULL;
        *n = 0;
        return 0;
    }
    if (nopi_y_expect(doc, node, NOPI_Y_SEQ, key, err) != 0)
        return -1;
    for (size_t i = 0; i < node->n; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s[%zu]", key, i);
        const char *s;
        if (nopi_y_string(doc, node->items[i], what, &s, err) != 0)
            return -1;
    }
    *items = (const nopi_ynode **)node->items;
    *n = node->n;
    return 0;
}
