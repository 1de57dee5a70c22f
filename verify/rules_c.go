package verify

var cRules = []Rule{}
