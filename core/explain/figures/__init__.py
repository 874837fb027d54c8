"""The explainer's figure builders: functions that take arrays and return `plotly.graph_objects.Figure`, one
module per room (encoding, similarity, attention, home). They compute nothing beyond layout."""
