app_name = "generation"
urlpatterns = []
