"""The new-session wizard's steps, one widget each (a tab of the wizard screen).

Each step lays out its fields, turns their events into messages for the screen
(`GraphStep.SampleChosen`, `KindsStep.KindsChanged`, ...) and shows what the screen hands
it (`show_graph`, `show_preview`, ...). The screen holds the choices and runs the engine.
"""
