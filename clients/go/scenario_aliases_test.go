package parkway_test

import (
	"regexp"
	"strings"
)

// callAliases are a scenario's names for tool calls, bound to the ids the server assigned (see
// test/scenarios/README.md): an expectation "tool_call_start X" binds X to its event's call id
// (again: rebinds it); everywhere else X stands for the id it is bound to. A name never bound
// stands for itself.
type callAliases struct {
	ids map[string]string
}

func newCallAliases() *callAliases {
	return &callAliases{ids: map[string]string{}}
}

func (a *callAliases) bind(alias, id string) {
	a.ids[alias] = id
}

// id is the id alias stands for.
func (a *callAliases) id(alias string) string {
	if id, ok := a.ids[alias]; ok {
		return id
	}
	return alias
}

// alias is the alias bound to id now, else id itself.
func (a *callAliases) alias(id string) string {
	for alias, bound := range a.ids {
		if bound == id {
			return alias
		}
	}
	return id
}

// aliasList writes comma-separated call ids as their aliases.
func (a *callAliases) aliasList(ids string) string {
	if ids == "" {
		return ""
	}
	parts := strings.Split(ids, ",")
	for i, id := range parts {
		parts[i] = a.alias(id)
	}
	return strings.Join(parts, ",")
}

var word = regexp.MustCompile(`\w+`)

// pattern is an error message pattern with every word that is a bound alias replaced by its id
// (escaped).
func (a *callAliases) pattern(source string) string {
	return word.ReplaceAllStringFunc(source, func(w string) string {
		if id, ok := a.ids[w]; ok {
			return regexp.QuoteMeta(id)
		}
		return w
	})
}
