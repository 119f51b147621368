package tracecompass

// The structure of TraceCompass's data-driven analysis XML, as its schema
// (xmlDefinition.xsd and the files it includes, org.eclipse.tracecompass.
// tmf.analysis.xml.core) declares it: for each element type, its
// attributes (with their allowed values where the schema enumerates them),
// the required ones, the types of its child elements and, for sequences,
// their order. Only the parts of the schema our analyses can reach are
// listed; an element or attribute outside them fails the test.

type elemType struct {
	attrs    map[string]string // attribute → enumeration name ("" for any text)
	required []string
	children map[string]string // child element → its type
}

var enums = map[string][]string{
	"bool":         {"true", "false"},
	"int":          nil, // checked by parsing
	"attrType":     {"null", "constant", "eventField", "eventName", "location", "query", "pool"},
	"valueType":    {"null", "int", "long", "string", "eventField", "eventName", "delete", "query", "script"},
	"forcedType":   {"int", "long", "string", "double"},
	"stack":        {"pop", "popAll", "push", "peek"},
	"operator":     {"eq", "ne", "ge", "gt", "le", "lt"},
	"viewAttrType": {"constant", "location", "query", "self"},
	"reference":    {"relative", "absolute"},
	"displayType":  {"absolute", "delta"},
	"segFieldType": {"null", "int", "long", "string"},
	"unit":         {"ns", "us", "ms", "s"},
	"scriptEngine": {"nashorn"},
}

var conditionChildren = map[string]string{"condition": "condition", "not": "conditionSingle", "and": "conditionMultiple", "or": "conditionMultiple"}

var patternConditionChildren = map[string]string{"condition": "patternCondition", "not": "patternSingleCondition", "and": "patternMultipleCondition", "or": "patternMultipleCondition"}

var schema = map[string]elemType{
	"tmfxml": {children: map[string]string{"timeGraphView": "timeGraphView", "xyView": "xyView", "stateProvider": "stateProvider", "pattern": "pattern"}},

	// xmlCommon.xsd
	"definedValue": {attrs: map[string]string{"name": "", "value": "", "color": ""}, required: []string{"name", "value"}},
	"location":     {attrs: map[string]string{"id": ""}, required: []string{"id"}, children: map[string]string{"stateAttribute": "stateAttribute"}},
	"mappingGroup": {attrs: map[string]string{"id": ""}, required: []string{"id"}, children: map[string]string{"entry": "mapEntry"}},
	"mapEntry":     {children: map[string]string{"stateValue": "stateValue"}},

	// xmlStateProvider.xsd
	"stateProvider": {attrs: map[string]string{"id": "", "version": "int"}, required: []string{"id", "version"},
		children: map[string]string{"head": "headProvider", "definedValue": "definedValue", "location": "location", "mappingGroup": "mappingGroup", "eventHandler": "eventHandler"}},
	"headProvider": {children: map[string]string{"traceType": "traceType", "label": "label"}},
	"traceType":    {attrs: map[string]string{"id": ""}, required: []string{"id"}},
	"label":        {attrs: map[string]string{"value": ""}},
	"eventHandler": {attrs: map[string]string{"eventName": ""}, required: []string{"eventName"}, children: map[string]string{"stateChange": "stateChange"}},
	"stateChange": {children: map[string]string{"stateAttribute": "stateAttribute", "stateValue": "stateValue",
		"if": "conditionSingle", "then": "stateChange", "else": "stateChange"}},
	"conditionSingle":   {children: conditionChildren},
	"conditionMultiple": {children: conditionChildren},
	"condition": {attrs: map[string]string{"operator": "operator"},
		children: map[string]string{"stateAttribute": "stateAttribute", "field": "eventField", "stateValue": "stateValue"}},
	"eventField": {attrs: map[string]string{"name": ""}, required: []string{"name"}},
	"stateAttribute": {attrs: map[string]string{"type": "attrType", "value": ""}, required: []string{"type"},
		children: map[string]string{"stateAttribute": "stateAttribute"}},
	"stateValue": {attrs: map[string]string{"id": "", "type": "valueType", "increment": "bool", "update": "bool", "stack": "stack",
		"forcedType": "forcedType", "mappingGroup": "", "value": "", "scriptEngine": "scriptEngine"}, required: []string{"type"},
		children: map[string]string{"stateAttribute": "stateAttribute", "stateValue": "stateValue"}},

	// xmlView.xsd
	"timeGraphView": {attrs: map[string]string{"id": ""}, required: []string{"id"},
		children: map[string]string{"head": "headOutput", "definedValue": "definedValue", "entry": "viewEntry"}},
	"xyView":      {attrs: map[string]string{"id": ""}, required: []string{"id"}, children: map[string]string{"head": "headOutput", "entry": "xyViewEntry"}},
	"headOutput":  {children: map[string]string{"analysis": "analysisRef", "label": "viewLabel"}},
	"analysisRef": {attrs: map[string]string{"id": "", "ssid": ""}, required: []string{"id"}},
	"viewLabel":   {attrs: map[string]string{"value": ""}, required: []string{"value"}},
	"viewEntry": {attrs: map[string]string{"path": "", "analysisId": "", "displayText": "bool"}, required: []string{"path"},
		children: map[string]string{"display": "viewStateAttribute", "id": "viewStateAttribute", "parent": "viewStateAttribute",
			"name": "viewStateAttribute", "entry": "viewEntry"}},
	"xyViewEntry": {attrs: map[string]string{"path": "", "displayType": "displayType"}, required: []string{"path"},
		children: map[string]string{"display": "viewStateAttribute", "name": "viewStateAttribute"}},
	"viewStateAttribute": {attrs: map[string]string{"type": "viewAttrType", "value": "", "reference": "reference"}, required: []string{"type"},
		children: map[string]string{"stateAttribute": "viewStateAttribute"}},

	// xmlPatternStateProvider.xsd
	"pattern": {attrs: map[string]string{"id": "", "version": "int"}, required: []string{"id", "version"},
		children: map[string]string{"head": "headProvider", "storedField": "storedField", "definedValue": "definedValue",
			"location": "location", "mappingGroup": "mappingGroup", "patternHandler": "patternHandler"}},
	"storedField":              {attrs: map[string]string{"id": "", "alias": ""}, required: []string{"id"}},
	"patternHandler":           {attrs: map[string]string{"initial": ""}, children: map[string]string{"test": "test", "action": "action", "fsm": "state"}},
	"test":                     {attrs: map[string]string{"id": ""}, required: []string{"id"}, children: map[string]string{"if": "patternSingleCondition"}},
	"patternSingleCondition":   {children: patternConditionChildren},
	"patternMultipleCondition": {children: patternConditionChildren},
	"patternCondition": {children: map[string]string{"stateAttribute": "stateAttribute", "field": "eventField", "stateValue": "stateValue",
		"timerange": "timerange", "elapsedTime": "elapsedTime"}},
	"timerange":       {attrs: map[string]string{"unit": "unit"}, children: map[string]string{"in": "timeRangeSingle", "out": "timeRangeSingle"}},
	"timeRangeSingle": {attrs: map[string]string{"begin": "int", "end": "int"}, required: []string{"begin", "end"}},
	"elapsedTime":     {attrs: map[string]string{"unit": "unit"}, children: map[string]string{"less": "elapsedSingle", "equal": "elapsedSingle", "more": "elapsedSingle"}},
	"elapsedSingle":   {attrs: map[string]string{"since": "", "value": "int"}, required: []string{"since", "value"}},
	"action": {attrs: map[string]string{"id": ""}, required: []string{"id"},
		children: map[string]string{"stateChange": "stateChange", "segment": "segment", "fsmScheduleAction": "fsmScheduleAction", "action": "action"}},
	"fsmScheduleAction": {attrs: map[string]string{"id": ""}, required: []string{"id"}},
	"segment":           {children: map[string]string{"segType": "segType", "segContent": "segContent"}},
	"segType":           {attrs: map[string]string{"segName": ""}, children: map[string]string{"segName": "segName"}},
	"segName":           {children: map[string]string{"stateValue": "stateValue"}},
	"segContent":        {children: map[string]string{"segField": "segField"}},
	"segField": {attrs: map[string]string{"name": "", "type": "segFieldType", "value": ""}, required: []string{"name", "type"},
		children: map[string]string{"stateValue": "stateValue"}},
	"state": {attrs: map[string]string{"id": "", "initial": "", "automatic": "", "multiple": "bool", "consuming": "bool"}, required: []string{"id"},
		children: map[string]string{"onentry": "handlers", "onexit": "handlers", "precondition": "transition", "initial": "initialState",
			"initialState": "initialState", "state": "state", "final": "finalState", "transition": "transition"}},
	"handlers":     {attrs: map[string]string{"action": ""}, required: []string{"action"}},
	"initialState": {children: map[string]string{"transition": "transition"}},
	"finalState":   {attrs: map[string]string{"id": ""}, required: []string{"id"}},
	"transition":   {attrs: map[string]string{"event": "", "cond": "", "target": "", "action": "", "saveStoredFields": "", "clearStoredFields": ""}},
}

// order lists, for the types whose children form an xs:sequence, the order
// the sequence requires (children not listed may come anywhere).
var order = map[string][]string{
	"headProvider":     {"traceType", "label"},
	"stateChange":      {"stateAttribute", "stateValue", "if", "then", "else"},
	"condition":        {"stateAttribute", "field", "stateValue"},
	"stateValue":       {"stateAttribute", "stateValue"},
	"timeGraphView":    {"head", "definedValue", "entry"},
	"xyView":           {"head", "entry"},
	"headOutput":       {"analysis", "label"},
	"viewEntry":        {"display", "id", "parent", "name", "entry"},
	"xyViewEntry":      {"display", "name"},
	"pattern":          {"head", "storedField", "definedValue", "location", "mappingGroup", "patternHandler"},
	"patternCondition": {"stateAttribute", "field", "stateValue"},
	"segment":          {"segType", "segContent"},
	"state":            {"onentry", "onexit", "precondition", "initial", "initialState", "state", "final", "transition"},
}
