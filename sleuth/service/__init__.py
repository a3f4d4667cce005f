"""The service layer: the one thing faces call (docs/faces.md).

``requests`` declares every verb's frozen request (fields declared once), ``verbs`` the table
of verbs the faces serve, ``argv`` and ``tool_schema`` generate the CLI parser and the MCP tool
schemas from the requests, and ``session`` owns the process resources a workbench runs on.
"""
