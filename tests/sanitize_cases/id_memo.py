"""A user's script: per-request settings memoised by the request object's id()."""


class Request:
    def __init__(self, prompt):
        self.prompt = prompt


_settings = {}


def settings_for(request):
    key = id(request)
    if key not in _settings:
        _settings[key] = {"prompt": request.prompt, "guidance": 5.0}
    return _settings[key]


def serve(prompts):
    served = []
    for prompt in prompts:
        request = Request(prompt)
        served.append(settings_for(request)["prompt"])
        del request
    return served


if __name__ == "__main__":
    for prompt, used in zip(["red", "blue", "green"], serve(["red", "blue", "green"])):
        print(f"{prompt} -> {used}")
