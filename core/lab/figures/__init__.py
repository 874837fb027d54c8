"""The Fault lab's figure builders: functions that take arrays and return `plotly.graph_objects.Figure`."""
